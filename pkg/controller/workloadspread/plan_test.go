package workloadspread

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var zoneA = &corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
	{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}

// spreadAB spreads over a (2 pods at most, zone a) and b (the rest).
func spreadAB() *appsv1alpha1.WorkloadSpread {
	return &appsv1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "spread", Generation: 3},
		Spec: appsv1alpha1.WorkloadSpreadSpec{
			TargetReference: &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web"},
			Subsets: []appsv1alpha1.WorkloadSpreadSubset{
				{Name: "a", RequiredNodeSelectorTerm: zoneA, MaxReplicas: ptr.To(intstr.FromInt32(2)),
					Patch: k8sruntime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"zone":"a"}}}`)}},
				{Name: "b"}}}}
}

// pod is a running pod of the CloneSet placed in subset (none when empty).
func pod(name, subset string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": "web"},
		CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)),
		OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web", Controller: ptr.To(true)}}},
		Spec:   corev1.PodSpec{NodeName: "node-" + name},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if subset != "" {
		p.Annotations = map[string]string{spreadrules.MatchedAnnotation: spreadrules.Matched{Name: "spread", Subset: subset}.String()}
	}
	return p
}

func at(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(d)) }

func statusOf(t *testing.T, list []appsv1alpha1.WorkloadSpreadSubsetStatus, name string) appsv1alpha1.WorkloadSpreadSubsetStatus {
	t.Helper()
	for _, s := range list {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no status for subset %s in %+v", name, list)
	return appsv1alpha1.WorkloadSpreadSubsetStatus{}
}

func hasNote(p *plan, reason, text string) bool {
	for _, n := range p.notes {
		if n.reason == reason && strings.Contains(n.message, text) {
			return true
		}
	}
	return false
}

// The subsets are recounted from the pods: a pod seen leaves creatingPods, a record past 30 s is
// dropped with a warning, a fresh one still counts against missingReplicas until it expires.
func TestPlanCountsAndSettlesRecords(t *testing.T) {
	spread := spreadAB()
	spread.Status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{spreadrules.VersionIgnored: {
		{Name: "a", CreatingPods: map[string]metav1.Time{"p1": at(-time.Second), "ghost": at(-40 * time.Second), "fresh": at(-5 * time.Second)}},
		{Name: "b", MissingReplicas: -1, DeletingPods: map[string]metav1.Time{"p3": at(-20 * time.Second), "p4": at(-time.Second)}}}}
	snap := &snapshot{spread: spread, kind: "CloneSet", replicas: 4, latest: spreadrules.VersionIgnored,
		pods: []*corev1.Pod{pod("p1", "a"), pod("p3", "b"), pod("p4", "b")}}
	p := computePlan(snap, now)
	a, b := statusOf(t, p.status.SubsetStatuses, "a"), statusOf(t, p.status.SubsetStatuses, "b")
	if a.Replicas != 1 || a.MissingReplicas != 1 || b.Replicas != 2 || b.MissingReplicas != -1 || p.status.ObservedGeneration != 3 {
		t.Errorf("overall: a %+v, b %+v", a, b)
	}
	va := statusOf(t, p.status.VersionedSubsetStatuses[spreadrules.VersionIgnored], "a")
	if len(va.CreatingPods) != 1 || va.CreatingPods["fresh"].Time.IsZero() || va.MissingReplicas != 0 {
		t.Errorf("versioned a: %+v", va)
	}
	vb := statusOf(t, p.status.VersionedSubsetStatuses[spreadrules.VersionIgnored], "b")
	if len(vb.DeletingPods) != 1 || vb.DeletingPods["p4"].Time.IsZero() {
		t.Errorf("versioned b: %+v", vb)
	}
	if !hasNote(p, "CreatePodFailed", "ghost") || !hasNote(p, "DeletePodFailed", "p3") {
		t.Errorf("notes: %+v", p.notes)
	}
	if want := now.Add(-time.Second + spreadrules.DeleteTimeout); !p.recheckAt.Equal(want) {
		t.Errorf("recheck at %v, want %v (p4's deletion record expires first)", p.recheckAt, want)
	}
}

// Scale-in empties the later subset first, and pods beyond a quota or in no subset go before any.
func TestPlanDeletionCosts(t *testing.T) {
	stray := pod("stray", "")
	stray.Spec.NodeName = ""
	snap := &snapshot{spread: spreadAB(), kind: "CloneSet", replicas: 5, latest: spreadrules.VersionIgnored,
		pods: []*corev1.Pod{pod("a1", "a"), pod("a2", "a"), pod("b1", "b"), stray}}
	p := computePlan(snap, now)
	want := map[string]string{"a1": "200", "a2": "200", "b1": "100", "stray": "-300"}
	got := map[string]string{}
	for pod, c := range p.costs {
		got[pod.Name] = c
	}
	if len(got) != len(want) {
		t.Fatalf("costs %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("cost of %s: %s, want %s", k, got[k], v)
		}
	}
	// A pod that carries its cost already is not patched again.
	snap.pods[0].Annotations[spreadrules.DeletionCostAnnotation] = "200"
	if _, again := computePlan(snap, now).costs[snap.pods[0]]; again {
		t.Error("unchanged cost written again")
	}
}

// A pod running before the spread is placed into the subset its node fits, with the patch's
// labels and the annotation; the quota counts it.
func TestPlanPlacesPodsRunningBeforeTheSpread(t *testing.T) {
	old := pod("old", "")
	other := pod("other", "")
	snap := &snapshot{spread: spreadAB(), kind: "CloneSet", replicas: 4, latest: spreadrules.VersionIgnored,
		pods:  []*corev1.Pod{old, other},
		nodes: map[string]*corev1.Node{"node-old": {ObjectMeta: metav1.ObjectMeta{Name: "node-old", Labels: map[string]string{"zone": "a"}}}}}
	p := computePlan(snap, now)
	if len(p.adopt) != 1 || p.adopt[0].pod != old || p.adopt[0].subset != "a" {
		t.Fatalf("adoptions: %+v", p.adopt)
	}
	patch := string(p.adopt[0].patch)
	if !strings.Contains(patch, `"zone":"a"`) || !strings.Contains(patch, spreadrules.MatchedAnnotation) {
		t.Errorf("patch %s", patch)
	}
	if a := statusOf(t, p.status.SubsetStatuses, "a"); a.Replicas != 1 || a.MissingReplicas != 1 {
		t.Errorf("a: %+v", a)
	}
	// other's node is unknown: it stays in no subset.
	if p.costs[other] != "-300" {
		t.Errorf("cost of the unplaced pod: %q", p.costs[other])
	}
	spread := spreadAB()
	spread.Annotations = map[string]string{IgnorePatchExistingPodsAnnotation: "true"}
	snap.spread = spread
	if patch := string(computePlan(snap, now).adopt[0].patch); strings.Contains(patch, `"zone"`) {
		t.Errorf("patch %s carries the subset's labels despite %s", patch, IgnorePatchExistingPodsAnnotation)
	}
}

// Adaptive: a pod that could not be scheduled for rescheduleCriticalSeconds marks its subset
// unschedulable and is deleted; the last subset stays schedulable; Fixed writes no condition.
func TestPlanAdaptive(t *testing.T) {
	spread := spreadAB()
	spread.Spec.ScheduleStrategy = appsv1alpha1.WorkloadSpreadScheduleStrategy{Type: appsv1alpha1.WorkloadSpreadAdaptiveScheduleStrategy,
		Adaptive: &appsv1alpha1.WorkloadSpreadAdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](30)}}
	stuck := pod("stuck", "a")
	stuck.Spec.NodeName = ""
	stuck.CreationTimestamp = at(-time.Minute)
	stuck.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}
	stuckB := stuck.DeepCopy()
	stuckB.Name = "stuck-b"
	stuckB.Annotations = map[string]string{spreadrules.MatchedAnnotation: spreadrules.Matched{Name: "spread", Subset: "b"}.String()}
	snap := &snapshot{spread: spread, kind: "CloneSet", replicas: 4, latest: spreadrules.VersionIgnored, pods: []*corev1.Pod{stuck, pod("a2", "a"), stuckB}}
	p := computePlan(snap, now)
	a := statusOf(t, p.status.SubsetStatuses, "a")
	c := spreadrules.Condition(&a, appsv1alpha1.WorkloadSpreadSubsetSchedulable)
	if c == nil || c.Status != corev1.ConditionFalse || !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("a's condition %+v", c)
	}
	va := statusOf(t, p.status.VersionedSubsetStatuses[spreadrules.VersionIgnored], "a")
	if c := spreadrules.Condition(&va, appsv1alpha1.WorkloadSpreadSubsetSchedulable); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("versioned a's condition %+v: the webhook reads it", c)
	}
	b := statusOf(t, p.status.SubsetStatuses, "b")
	if c := spreadrules.Condition(&b, appsv1alpha1.WorkloadSpreadSubsetSchedulable); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("last subset's condition %+v", c)
	}
	if got := p.sortedStuck(); len(got) != 1 || got[0].pod != stuck {
		t.Errorf("stuck: %+v", got)
	}
	if !hasNote(p, "SubsetUnschedulable", "subset a") && !hasNote(p, "SubsetUnschedulable", "Subset a") {
		t.Errorf("notes %+v", p.notes)
	}
	// Five minutes on, with the pod gone, the subset is schedulable again.
	snap.spread = spread.DeepCopy()
	snap.spread.Status = p.status
	snap.pods = []*corev1.Pod{pod("a2", "a")}
	later := computePlan(snap, now.Add(6*time.Minute))
	a = statusOf(t, later.status.SubsetStatuses, "a")
	if c := spreadrules.Condition(&a, appsv1alpha1.WorkloadSpreadSubsetSchedulable); c == nil || c.Status != corev1.ConditionTrue || !hasNote(later, "RecoverSchedulable", "a") {
		t.Errorf("after the mark expired: %+v, notes %+v", c, later.notes)
	}
	spread.Spec.ScheduleStrategy = appsv1alpha1.WorkloadSpreadScheduleStrategy{Type: appsv1alpha1.WorkloadSpreadFixedScheduleStrategy}
	snap.spread = spread
	for _, s := range computePlan(snap, now).status.SubsetStatuses {
		if len(s.Conditions) != 0 {
			t.Errorf("Fixed: %s has conditions %+v", s.Name, s.Conditions)
		}
	}
}

// A Deployment's pods are counted per revision; the latest revision loses its last subset first,
// an older one its first, so a rollout keeps the spread.
func TestPlanVersions(t *testing.T) {
	spread := spreadAB()
	spread.Spec.TargetReference = &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	mk := func(name, subset, rev string) *corev1.Pod {
		p := pod(name, subset)
		p.OwnerReferences[0] = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-" + rev, Controller: ptr.To(true)}
		p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = rev
		return p
	}
	pods := []*corev1.Pod{mk("old-a", "a", "v1"), mk("old-b", "b", "v1"), mk("new-a", "a", "v2"), mk("new-b", "b", "v2")}
	p := computePlan(&snapshot{spread: spread, kind: "Deployment", replicas: 4, latest: "v2", pods: pods}, now)
	want := map[string]string{"old-a": "100", "old-b": "200", "new-a": "200", "new-b": "100"}
	for pod, c := range p.costs {
		if want[pod.Name] != c {
			t.Errorf("cost of %s: %s, want %s", pod.Name, c, want[pod.Name])
		}
	}
	if len(p.status.VersionedSubsetStatuses) != 2 || statusOf(t, p.status.VersionedSubsetStatuses["v1"], "a").Replicas != 1 ||
		statusOf(t, p.status.SubsetStatuses, "a").Replicas != 2 || statusOf(t, p.status.SubsetStatuses, "a").MissingReplicas != 0 {
		t.Errorf("status %+v", p.status)
	}
	// A revision without pods is kept while it holds a record, and dropped after.
	spread.Status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{
		"v3": {{Name: "a", CreatingPods: map[string]metav1.Time{"x": at(-time.Second)}}, {Name: "b", MissingReplicas: -1}},
		"v0": {{Name: "a"}, {Name: "b", MissingReplicas: -1}}}
	p = computePlan(&snapshot{spread: spread, kind: "Deployment", replicas: 4, latest: "v2", pods: pods}, now)
	if _, ok := p.status.VersionedSubsetStatuses["v3"]; !ok {
		t.Error("revision v3 with a pending creation dropped")
	}
	if _, ok := p.status.VersionedSubsetStatuses["v0"]; ok {
		t.Error("empty revision v0 kept")
	}
}
