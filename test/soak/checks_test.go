package main

import (
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

func testPod(app, name string, ready bool, gate corev1.ConditionStatus) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name), Labels: map[string]string{"app": app},
		CreationTimestamp: metav1.NewTime(time.Now().Add(-time.Minute))},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}}}
	if gate != "" {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: appspub.InPlaceUpdateReady, Status: gate})
	}
	return p
}

func testChecker(t *testing.T, pods ...*corev1.Pod) (*checker, *replicaHistory) {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	h := newReplicaHistory(time.Now().Add(-time.Minute))
	return &checker{pods: corelisters.NewPodLister(idx), replicas: h, evicted: &sync.Map{}, asks: newAsks(), states: newRecordedZones()}, h
}

func checksFound(ch *checker) []string {
	var out []string
	for _, v := range ch.violations() {
		out = append(out, v.Check+": "+v.Message)
	}
	return out
}

// Taking a pod out is checked against the workload's maxUnavailable (api: 1) and web's budget (1),
// counting only pods that were available before.
func TestTakeOut(t *testing.T) {
	for name, tc := range map[string]struct {
		others []*corev1.Pod
		app    string
		want   bool
	}{
		"alone":                     {nil, "api", false},
		"another updating":          {[]*corev1.Pod{testPod("api", "api-b", false, corev1.ConditionFalse)}, "api", true},
		"another ready":             {[]*corev1.Pod{testPod("api", "api-b", true, corev1.ConditionTrue)}, "api", false},
		"web: budget 1, one out":    {[]*corev1.Pod{testPod("web", "web-b", false, "")}, "web", true},
		"db: maxUnavailable 2, one": {[]*corev1.Pod{testPod("db", "db-1", false, corev1.ConditionFalse)}, "db", false},
		"db: maxUnavailable 2, two": {[]*corev1.Pod{testPod("db", "db-1", false, ""), testPod("db", "db-2", false, "")}, "db", true},
		"a pod of no workload":      {nil, "other", false},
	} {
		t.Run(name, func(t *testing.T) {
			old := testPod(tc.app, tc.app+"-a", true, corev1.ConditionTrue)
			cur := testPod(tc.app, tc.app+"-a", false, corev1.ConditionFalse)
			ch, _ := testChecker(t, append(tc.others, cur)...)
			ch.podUpdated(old, cur)
			if got := len(ch.violations()) > 0; got != tc.want {
				t.Errorf("violation %v, want %v: %q", got, tc.want, checksFound(ch))
			}
		})
	}
	// A pod that was not available is no change.
	ch, _ := testChecker(t, testPod("api", "api-b", false, corev1.ConditionFalse), testPod("api", "api-a", false, corev1.ConditionFalse))
	ch.podUpdated(testPod("api", "api-a", false, ""), testPod("api", "api-a", false, corev1.ConditionFalse))
	if v := checksFound(ch); len(v) != 0 {
		t.Errorf("taking out an unavailable pod: %q", v)
	}
}

// A CloneSet with pods beyond its replicas may take out more than maxUnavailable of them while
// replicas less maxUnavailable stay available (here 2 of 5).
func TestTakeOutWithSurplus(t *testing.T) {
	old := testPod("api", "api-a", true, corev1.ConditionTrue)
	cur := testPod("api", "api-a", false, corev1.ConditionFalse)
	pods := []*corev1.Pod{cur, testPod("api", "api-b", false, corev1.ConditionFalse), testPod("api", "api-c", false, corev1.ConditionFalse),
		testPod("api", "api-d", true, corev1.ConditionTrue), testPod("api", "api-e", true, corev1.ConditionTrue)}
	// The history starts at api's initial replicas (more than 3): the fewest asked counts.
	for asked, want := range map[int32]bool{3: false, 8: true} {
		ch, h := testChecker(t, pods...)
		h.record("api", asked, time.Now())
		ch.podUpdated(old, cur)
		if got := len(ch.violations()) > 0; got != want {
			t.Errorf("5 pods, 3 out, %d asked: violation %v, want %v: %q", asked, got, want, checksFound(ch))
		}
	}
}

// A deletion is what a scale-in or an eviction asked, or a violation.
func TestDeletion(t *testing.T) {
	pods := []*corev1.Pod{testPod("api", "api-a", true, ""), testPod("api", "api-b", true, ""), testPod("api", "api-c", true, ""),
		testPod("api", "api-d", true, "")} // api starts at 4 replicas
	ch, _ := testChecker(t, pods...)
	ch.podGoes(pods[0], pods[0])
	if v := checksFound(ch); len(v) != 1 || !strings.HasPrefix(v[0], checkDeletion) {
		t.Fatalf("an unasked deletion: %q", v)
	}
	ch, h := testChecker(t, pods...)
	h.record("api", 3, time.Now())
	ch.podGoes(pods[0], pods[0])
	ch.evicted.Store(pods[1].UID, true)
	ch.podGoes(pods[1], pods[1])
	if v := checksFound(ch); len(v) != 0 {
		t.Fatalf("a scale-in and an eviction: %q", v)
	}
}

func TestSidecarAndClaims(t *testing.T) {
	ch, _ := testChecker(t)
	with := testPod("web", "web-a", true, "")
	with.Spec.Containers = []corev1.Container{{Name: "app"}, {Name: sidecarName}}
	ch.podAdded(with)
	if v := checksFound(ch); len(v) != 0 {
		t.Fatalf("a pod with its sidecar: %q", v)
	}
	ch.podAdded(testPod("web", "web-b", true, ""))
	ch.claimGoes(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-db-0"}})
	v := checksFound(ch)
	if len(v) != 2 || !strings.HasPrefix(v[0], checkSidecar) || !strings.HasPrefix(v[1], checkClaims) {
		t.Fatalf("a pod without its sidecar, a claim deleted: %q", v)
	}
}

// A StatefulSet's scale-in removes the ordinals at and above its replicas even while a lower one is
// missing for a moment (evicted, being made again); a lower ordinal deleted is a violation.
func TestStatefulSetScaleInByOrdinal(t *testing.T) {
	pods := []*corev1.Pod{testPod("db", "db-0", true, ""), testPod("db", "db-2", true, ""), testPod("db", "db-3", true, "")} // db-1 evicted
	ch, h := testChecker(t, pods...)
	h.record("db", 2, time.Now())
	ch.podGoes(pods[2], pods[2])
	ch.podGoes(pods[1], pods[1])
	if v := checksFound(ch); len(v) != 0 {
		t.Fatalf("scale-in of ordinals 2 and 3 to replicas 2: %q", v)
	}
	pods = []*corev1.Pod{testPod("db", "db-0", true, ""), testPod("db", "db-1", true, "")}
	ch, h = testChecker(t, pods...)
	h.record("db", 2, time.Now())
	ch.podGoes(pods[0], pods[0])
	if v := checksFound(ch); len(v) != 1 || !strings.HasPrefix(v[0], checkDeletion) {
		t.Fatalf("ordinal 0 deleted with replicas 2: %q", v)
	}
}

// web's budget counts over the replicas asked: a take-out with a pod missing (evicted, not yet
// replaced) breaks it, unless a pod was just released from web's selector (its budget still counts
// it until its controller recounts).
func TestTakeOutBudgetAfterARelease(t *testing.T) {
	old := testPod("web", "web-a", true, corev1.ConditionTrue)
	cur := testPod("web", "web-a", false, corev1.ConditionFalse)
	ch, h := testChecker(t, cur, testPod("web", "web-b", true, ""))
	h.record("web", 3, time.Now())
	ch.podUpdated(old, cur)
	if v := checksFound(ch); len(v) != 1 || !strings.Contains(v[0], "PodUnavailableBudget") {
		t.Fatalf("3 replicas asked, 1 available left: %q", v)
	}
	ch, h = testChecker(t, cur, testPod("web", "web-b", true, ""))
	h.record("web", 3, time.Now())
	ch.asks.podReleased("web", time.Now())
	ch.podUpdated(old, cur)
	if v := checksFound(ch); len(v) != 0 {
		t.Fatalf("right after a release: %q", v)
	}
}
