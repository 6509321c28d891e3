package subset

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pendingPod is a pod created at created that the scheduler rejected.
func pendingPod(name string, created time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			LastTransitionTime: metav1.NewTime(created.Add(time.Second)),
		}}},
	}
}

func TestPodStuck(t *testing.T) {
	critical := 30 * time.Second
	deleting := pendingPod("d", t0)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	bound := pendingPod("b", t0)
	bound.Spec.NodeName = "n1"
	running := pendingPod("r", t0)
	running.Status.Phase = corev1.PodRunning
	waiting := pendingPod("w", t0)
	waiting.Status.Conditions = nil
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		now       time.Time
		wantStuck bool
		wantAt    time.Time
	}{
		{"before the deadline: stuck later", pendingPod("p", t0), t0.Add(10 * time.Second), false, t0.Add(critical)},
		{"exactly at the deadline: not yet", pendingPod("p", t0), t0.Add(critical), false, t0.Add(critical)},
		{"past the deadline", pendingPod("p", t0), t0.Add(critical + time.Nanosecond), true, time.Time{}},
		{"deleting", deleting, t0.Add(time.Hour), false, time.Time{}},
		{"bound", bound, t0.Add(time.Hour), false, time.Time{}},
		{"running", running, t0.Add(time.Hour), false, time.Time{}},
		{"pending without Unschedulable", waiting, t0.Add(time.Hour), false, time.Time{}},
	} {
		stuck, at := PodStuck(tc.pod, critical, tc.now)
		if stuck != tc.wantStuck || !at.Equal(tc.wantAt) {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, stuck, at, tc.wantStuck, tc.wantAt)
		}
	}
}

func TestAssess(t *testing.T) {
	w := Window{RescheduleCritical: 30 * time.Second, Unschedulable: 300 * time.Second}
	marked := t0.Add(-100 * time.Second)
	expired := t0.Add(-400 * time.Second)
	old := pendingPod("old", t0.Add(-time.Minute))
	young := pendingPod("young", t0.Add(-10*time.Second))
	cases := []struct {
		name   string
		pods   []*corev1.Pod
		marked *time.Time
		want   Verdict
	}{
		{name: "no pods, no mark", want: Verdict{}},
		{name: "young pending pod: schedulable, recheck when it turns stuck",
			pods: []*corev1.Pod{young}, want: Verdict{RecheckAt: t0.Add(20 * time.Second)}},
		{name: "stuck pod marks the subset now",
			pods: []*corev1.Pod{old, young},
			want: Verdict{Stuck: []*corev1.Pod{old}, Unschedulable: true, MarkedSince: t0, Until: t0.Add(300 * time.Second), RecheckAt: t0.Add(20 * time.Second)}},
		{name: "unexpired mark holds without stuck pods",
			marked: &marked,
			want:   Verdict{Unschedulable: true, MarkedSince: marked, Until: marked.Add(300 * time.Second), RecheckAt: marked.Add(300 * time.Second)}},
		{name: "unexpired mark keeps its time when pods are stuck again",
			pods: []*corev1.Pod{old}, marked: &marked,
			want: Verdict{Stuck: []*corev1.Pod{old}, Unschedulable: true, MarkedSince: marked, Until: marked.Add(300 * time.Second), RecheckAt: marked.Add(300 * time.Second)}},
		{name: "expired mark recovers", marked: &expired, want: Verdict{}},
		{name: "expired mark with a stuck pod starts a new mark",
			pods: []*corev1.Pod{old}, marked: &expired,
			want: Verdict{Stuck: []*corev1.Pod{old}, Unschedulable: true, MarkedSince: t0, Until: t0.Add(300 * time.Second), RecheckAt: t0.Add(300 * time.Second)}},
	}
	for _, tc := range cases {
		got := Assess(tc.pods, tc.marked, t0, w)
		if got.Unschedulable != tc.want.Unschedulable || !got.MarkedSince.Equal(tc.want.MarkedSince) ||
			!got.Until.Equal(tc.want.Until) || !got.RecheckAt.Equal(tc.want.RecheckAt) || len(got.Stuck) != len(tc.want.Stuck) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
			continue
		}
		for i := range got.Stuck {
			if got.Stuck[i] != tc.want.Stuck[i] {
				t.Errorf("%s: stuck[%d] = %s, want %s", tc.name, i, got.Stuck[i].Name, tc.want.Stuck[i].Name)
			}
		}
	}
}
