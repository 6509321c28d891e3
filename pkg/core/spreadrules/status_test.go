package spreadrules

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/subset"
)

func member(name string) Member { return Member{Name: name, Key: name, Active: true} }

// missingReplicas is the quota less the pods and the expected creations, plus the expected
// deletions, clamped to [0, quota]; -1 stays -1.
func TestComputeSubsetStatus(t *testing.T) {
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	for _, tc := range []struct {
		name            string
		in              SubsetInput
		replicas, miss  int32
		creating, delet int
		recheck         time.Duration
	}{
		{"pods only", SubsetInput{MaxReplicas: num(3), Pods: []Member{member("a"), member("b")}}, 2, 1, 0, 0, 0},
		{"over quota clamps at 0", SubsetInput{MaxReplicas: num(1), Pods: []Member{member("a"), member("b")}}, 2, 0, 0, 0, 0},
		{"inactive pods do not count", SubsetInput{MaxReplicas: num(2), Pods: []Member{{Name: "x", Key: "x"}}}, 0, 2, 0, 0, 0},
		{"an expected creation counts until its pod shows", SubsetInput{MaxReplicas: num(3), Pods: []Member{member("a")},
			Old: &appsv1alpha1.WorkloadSpreadSubsetStatus{CreatingPods: map[string]metav1.Time{"a": at(-time.Second), "b": at(-time.Second)}}},
			1, 1, 1, 0, CreateTimeout - time.Second},
		{"an expected deletion frees a replica, not beyond the quota", SubsetInput{MaxReplicas: num(1), Pods: []Member{member("a")},
			Old: &appsv1alpha1.WorkloadSpreadSubsetStatus{DeletingPods: map[string]metav1.Time{"a": at(-time.Second)}}},
			1, 1, 0, 1, DeleteTimeout - time.Second},
		{"a deletion of a pod already gone is dropped", SubsetInput{MaxReplicas: num(1),
			Old: &appsv1alpha1.WorkloadSpreadSubsetStatus{DeletingPods: map[string]metav1.Time{"gone": at(-time.Second)}}},
			0, 1, 0, 0, 0},
		{"unlimited", SubsetInput{Pods: []Member{member("a")}}, 1, -1, 0, 0, 0},
		// y took going's replica and is in the cache before going's deletion is: full, whichever
		// pod is counted first (counted pod by pod with a clamp at 0, going last read one short).
		{"a pod in the replica of one going, going listed last", SubsetInput{MaxReplicas: num(3),
			Pods: []Member{member("a"), member("b"), member("y"), member("going")},
			Old:  &appsv1alpha1.WorkloadSpreadSubsetStatus{DeletingPods: map[string]metav1.Time{"going": at(-time.Second)}}},
			4, 0, 0, 1, DeleteTimeout - time.Second},
		{"a pod in the replica of one going, going listed first", SubsetInput{MaxReplicas: num(3),
			Pods: []Member{member("going"), member("a"), member("b"), member("y")},
			Old:  &appsv1alpha1.WorkloadSpreadSubsetStatus{DeletingPods: map[string]metav1.Time{"going": at(-time.Second)}}},
			4, 0, 0, 1, DeleteTimeout - time.Second},
		{"an expected creation in the replica of one going", SubsetInput{MaxReplicas: num(2), Pods: []Member{member("a"), member("going")},
			Old: &appsv1alpha1.WorkloadSpreadSubsetStatus{CreatingPods: map[string]metav1.Time{"y": at(-time.Second)},
				DeletingPods: map[string]metav1.Time{"going": at(-time.Second)}}},
			2, 0, 1, 1, DeleteTimeout - time.Second},
	} {
		out, err := ComputeSubsetStatus(tc.in, t0)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		st := out.Status
		var recheck time.Duration
		if !out.RecheckAt.IsZero() {
			recheck = out.RecheckAt.Sub(t0)
		}
		if st.Replicas != tc.replicas || st.MissingReplicas != tc.miss || len(st.CreatingPods) != tc.creating || len(st.DeletingPods) != tc.delet || recheck != tc.recheck {
			t.Errorf("%s: %+v, recheck in %v", tc.name, st, recheck)
		}
	}
	if _, err := ComputeSubsetStatus(SubsetInput{MaxReplicas: pct("x")}, t0); err == nil {
		t.Error("malformed quota accepted")
	}
}

func TestSchedulableCondition(t *testing.T) {
	marked := t0.Add(-time.Minute)
	c := SchedulableCondition(subset.Verdict{Unschedulable: true, MarkedSince: marked}, nil, t0)
	if c.Status != corev1.ConditionFalse || !c.LastTransitionTime.Time.Equal(marked) || c.Reason != "" {
		t.Errorf("unschedulable: %+v", c)
	}
	old := &appsv1alpha1.WorkloadSpreadSubsetCondition{Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(marked)}
	if c := SchedulableCondition(subset.Verdict{}, old, t0); c.Status != corev1.ConditionTrue || !c.LastTransitionTime.Time.Equal(marked) {
		t.Errorf("still schedulable: %+v", c)
	}
	old.Status = corev1.ConditionFalse
	if c := SchedulableCondition(subset.Verdict{}, old, t0); !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("recovered: %+v", c)
	}
}

func TestMatchedAnnotation(t *testing.T) {
	if got := (Matched{Name: "ws", Subset: "a"}).String(); got != `{"name":"ws","subset":"a"}` {
		t.Errorf("annotation %s", got)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{
		MatchedAnnotation: `{"Name":"ws","Subset":"a","uid":"u-1"}`}}}
	if m := MatchedOf(pod); m == nil || m.Name != "ws" || m.Subset != "a" || Key(pod) != "u-1" {
		t.Errorf("read %+v, key %s", m, Key(pod))
	}
	pod.Annotations[MatchedAnnotation] = "{"
	if MatchedOf(pod) != nil || Key(pod) != "p" {
		t.Error("malformed annotation read")
	}
}
