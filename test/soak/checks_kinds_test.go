package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
)

// webPods are n of web's pods (web starts at 5 replicas), the first unready ones not ready.
func webPods(n, unready int) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, testPod("web", fmt.Sprintf("web-%d", i), i >= unready, corev1.ConditionTrue))
	}
	return out
}

// web's budget counts a pod evicted and not yet replaced by a ready one, for Kruise's updates and
// the evictions it lets through alike.
func TestBudgetCountsEvictions(t *testing.T) {
	for name, tc := range map[string]struct {
		pods []*corev1.Pod
		want bool
	}{
		"all five there":                    {webPods(5, 0), false},
		"one evicted, not replaced":         {webPods(4, 0), true},
		"one evicted, replacement starting": {append(webPods(4, 0), testPod("web", "web-new", false, corev1.ConditionTrue)), true},
		"one not ready":                     {webPods(5, 1), true},
	} {
		t.Run(name, func(t *testing.T) {
			// Kruise takes web-4 out.
			cur := tc.pods[len(tc.pods)-1].DeepCopy()
			if cur.Name == "web-new" {
				cur = tc.pods[len(tc.pods)-2].DeepCopy()
			}
			old := cur.DeepCopy()
			cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}, {Type: "InPlaceUpdateReady", Status: corev1.ConditionFalse}}
			ch, _ := testChecker(t, tc.pods...)
			ch.podUpdated(old, cur)
			if got := len(ch.violations()) > 0; got != tc.want {
				t.Errorf("update: violation %v, want %v: %q", got, tc.want, checksFound(ch))
			}
			// The driver evicts it instead.
			ch, _ = testChecker(t, tc.pods...)
			ch.evicted.Store(old.UID, true)
			gone := old.DeepCopy()
			gone.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			ch.podUpdated(old, gone)
			if got := len(ch.violations()) > 0; got != tc.want {
				t.Errorf("eviction: violation %v, want %v: %q", got, tc.want, checksFound(ch))
			}
		})
	}
	// A scale-in of web to 4 just asked, 5 pods still live, one updating: one more may go out (3
	// of the 4 replicas stay available), as the budget counts.
	pods := webPods(5, 1)
	cur := pods[4].DeepCopy()
	cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}, {Type: "InPlaceUpdateReady", Status: corev1.ConditionFalse}}
	ch, h := testChecker(t, append(pods[:4], cur)...)
	h.record("web", 4, time.Now())
	ch.podUpdated(pods[4], cur)
	if v := checksFound(ch); len(v) != 0 {
		t.Errorf("taking one out during a scale-in to 4 with 5 live: %q", v)
	}
	// A scale-in of web within 30 s: the budget counts on the fewer replicas.
	ch, h = testChecker(t, webPods(4, 0)...)
	h.record("web", 4, time.Now())
	ch.evicted.Store(types.UID("web-0"), true)
	ch.podGoes(webPods(1, 0)[0], webPods(1, 0)[0])
	if v := checksFound(ch); len(v) != 0 {
		t.Errorf("evicting one of 4 asked: %q", v)
	}
	// Right after a pod of web was released, its budget had not recounted: an eviction then is
	// not held against it.
	ch, _ = testChecker(t, webPods(4, 0)...)
	ch.asks.podReleased("web", time.Now())
	ch.evicted.Store(types.UID("web-0"), true)
	ch.podGoes(webPods(1, 0)[0], webPods(1, 0)[0])
	if v := checksFound(ch); len(v) != 0 {
		t.Errorf("evicting one right after a release: %q", v)
	}
}

// A workload never has more live pods than the most replicas asked of it lately; the pods of an
// owner the driver deleted with them, and released ones, do not count.
func TestBeyondReplicas(t *testing.T) {
	api := func(n int) []*corev1.Pod {
		var out []*corev1.Pod
		for i := range n {
			out = append(out, testPod("api", fmt.Sprintf("api-%d", i), true, ""))
		}
		return out
	}
	ch, _ := testChecker(t, api(4)...) // api starts at 4
	ch.podAdded(api(4)[3])
	if v := checksFound(ch); len(v) != 0 {
		t.Fatalf("4 of 4: %q", v)
	}
	pods := api(5)
	ch, _ = testChecker(t, pods...)
	ch.podAdded(pods[4])
	if v := checksFound(ch); len(v) != 1 || !strings.HasPrefix(v[0], checkExtra) {
		t.Fatalf("5 of 4 (orphans not adopted): %q", v)
	}
	ch, h := testChecker(t, pods...)
	h.record("api", 5, time.Now().Add(-10*time.Second))
	h.record("api", 2, time.Now())
	ch.podAdded(pods[4])
	if v := checksFound(ch); len(v) != 0 {
		t.Fatalf("5 while 5 were asked 10 s ago: %q", v)
	}
	old := api(5)
	for _, p := range old[:2] {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "CloneSet", Name: "api", UID: "old", Controller: ptrTrue()}}
	}
	ch, _ = testChecker(t, old...)
	ch.asks.ownerDeleted("old")
	ch.podAdded(old[4])
	if v := checksFound(ch); len(v) != 0 {
		t.Fatalf("the deleted owner's pods counted: %q", v)
	}
}

func ptrTrue() *bool { b := true; return &b }

// The spread's subset a holds at most spreadMaxA of the pods placed in it at their creation.
func TestSpreadWithin(t *testing.T) {
	var pods []*corev1.Pod
	for i := range spreadMaxA + 1 {
		p := testPod("api", fmt.Sprintf("api-%d", i), true, "")
		p.Annotations = map[string]string{spreadrules.MatchedAnnotation: spreadrules.Matched{Name: spreadName, Subset: "a"}.String()}
		pods = append(pods, p)
	}
	ch, _ := testChecker(t, pods[:spreadMaxA]...)
	for _, p := range pods[:spreadMaxA] {
		ch.spreadPlaced(p)
	}
	ch.spreadWithin("a", spreadMaxA)
	if v := checksFound(ch); len(v) != 0 {
		t.Fatalf("%d in a: %q", spreadMaxA, v)
	}
	ch, _ = testChecker(t, pods...)
	for _, p := range pods {
		ch.spreadPlaced(p)
	}
	ch.spreadWithin("a", spreadMaxA)
	if v := checksFound(ch); len(v) != 1 || !strings.HasPrefix(v[0], checkSpread) {
		t.Fatalf("%d in a: %q", spreadMaxA+1, v)
	}
}

// A pod of db made again under a name with a zone recorded long enough is created in that zone,
// unless a scale-in or a deletion of db may have dropped the state.
func TestZoneKept(t *testing.T) {
	long := time.Now().Add(-time.Minute)
	pod := func(zone string) *corev1.Pod {
		p := testPod("db", "db-1", false, "")
		if zone != "" {
			p.Spec.NodeSelector = map[string]string{zoneLabel: zone}
		}
		return p
	}
	for name, tc := range map[string]struct {
		pod      *corev1.Pod
		since    time.Time
		replicas int32
		deleted  bool
		want     bool
	}{
		"in its zone":              {pod("a"), long, 4, false, false},
		"no zone":                  {pod(""), long, 4, false, true},
		"another zone":             {pod("b"), long, 4, false, true},
		"recorded just now":        {pod(""), time.Now(), 4, false, false},
		"ordinal scaled in lately": {pod(""), long, 1, false, false},
		"db deleted lately":        {pod(""), long, 4, true, false},
	} {
		t.Run(name, func(t *testing.T) {
			ch, h := testChecker(t)
			h.record("db", tc.replicas, time.Now())
			ch.states.set(map[string]appsv1alpha1.PersistentPodStatePodState{"db-1": {NodeTopologyLabels: map[string]string{zoneLabel: "a"}}}, tc.since)
			if tc.deleted {
				ch.asks.touched("db", time.Now())
			}
			ch.podAdded(tc.pod)
			if got := len(ch.violations()) > 0; got != tc.want {
				t.Errorf("violation %v, want %v: %q", got, tc.want, checksFound(ch))
			}
		})
	}
}

// A recorded zone keeps the time it was first seen while it stays; a new zone starts again.
func TestRecordedZones(t *testing.T) {
	r := newRecordedZones()
	t0 := time.Now()
	st := func(zone string) map[string]appsv1alpha1.PersistentPodStatePodState {
		return map[string]appsv1alpha1.PersistentPodStatePodState{"db-0": {NodeTopologyLabels: map[string]string{zoneLabel: zone}}}
	}
	r.set(st("a"), t0)
	r.set(st("a"), t0.Add(time.Second))
	if z, at, ok := r.get("db-0"); !ok || z != "a" || !at.Equal(t0) {
		t.Fatalf("kept: %q %v %v", z, at, ok)
	}
	r.set(st("b"), t0.Add(2*time.Second))
	if z, at, _ := r.get("db-0"); z != "b" || !at.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("changed: %q %v", z, at)
	}
	r.set(nil, t0)
	if _, _, ok := r.get("db-0"); ok {
		t.Fatal("dropped state still there")
	}
}

// A released pod goes only when the driver deletes it; the pods of an owner deleted with them go
// as asked.
func TestReleasedAndDeletedOwners(t *testing.T) {
	released := testPod("web-released", "web-x", true, "")
	released.Labels[releasedLabel] = "true"
	ch, _ := testChecker(t)
	ch.podGoes(released, released)
	if v := checksFound(ch); len(v) != 1 || !strings.HasPrefix(v[0], checkDeletion) {
		t.Fatalf("a released pod deleted unasked: %q", v)
	}
	ch, _ = testChecker(t)
	ch.evicted.Store(released.UID, true)
	ch.podGoes(released, released)
	owned := testPod("agent", "agent-x", true, "")
	owned.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", UID: "old", Controller: ptrTrue()}}
	ch.asks.ownerDeleted("old")
	ch.podGoes(owned, owned)
	if v := checksFound(ch); len(v) != 0 {
		t.Fatalf("asked deletions: %q", v)
	}
}

// ud's maxUnavailable is counted over the subset of the pod taken out.
func TestUnitedDeploymentPeers(t *testing.T) {
	pod := func(name, subset string, ready bool) *corev1.Pod {
		p := testPod(udName, name, ready, "")
		p.Labels[subsetLabel] = subset
		return p
	}
	other := pod("ud-b-1", "b", false)
	old, cur := pod("ud-a-1", "a", true), pod("ud-a-1", "a", false)
	cur.Status.Conditions = append(cur.Status.Conditions, corev1.PodCondition{Type: "InPlaceUpdateReady", Status: corev1.ConditionFalse})
	ch, _ := testChecker(t, other, cur)
	ch.podUpdated(old, cur)
	if v := checksFound(ch); len(v) != 0 {
		t.Fatalf("one out in each subset: %q", v)
	}
	ch, _ = testChecker(t, pod("ud-a-2", "a", false), cur)
	ch.podUpdated(old, cur)
	if v := checksFound(ch); len(v) != 1 {
		t.Fatalf("two out in subset a: %q", v)
	}
}
