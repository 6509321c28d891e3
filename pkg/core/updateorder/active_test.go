package updateorder

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kubernetes compares the highest restart count of the regular containers, then that of the
// sidecar containers (init containers with restartPolicy Always); plain init containers do not count.
func TestRestarts(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "side", RestartPolicy: &always}, {Name: "init"}}},
		Status: corev1.PodStatus{
			ContainerStatuses:     []corev1.ContainerStatus{{Name: "a", RestartCount: 1}, {Name: "b", RestartCount: 3}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "side", RestartCount: 4}, {Name: "init", RestartCount: 9}},
		},
	}
	if r, s := Restarts(pod); r != 3 || s != 4 {
		t.Errorf("Restarts = %d, %d; want 3, 4", r, s)
	}
}

// The ActivePods order, rule by rule: each pair differs in one rule only and a goes first.
func TestActive(t *testing.T) {
	now := time.Now()
	base := Rank{Scheduled: true, Phase: corev1.PodRunning, Ready: true, ReadySince: now.Add(-time.Hour), Created: now.Add(-2 * time.Hour)}
	with := func(f func(*Rank)) Rank { r := base; f(&r); return r }
	for name, pair := range map[string][2]Rank{
		"unscheduled first":      {with(func(r *Rank) { r.Scheduled = false }), base},
		"pending before running": {with(func(r *Rank) { r.Phase = corev1.PodPending }), base},
		"unknown before running": {with(func(r *Rank) { r.Phase = corev1.PodUnknown }), base},
		"not ready first":        {with(func(r *Rank) { r.Ready = false }), base},
		"ready for less first":   {with(func(r *Rank) { r.ReadySince = now }), base},
		"unknown ready time":     {with(func(r *Rank) { r.ReadySince = time.Time{} }), base},
		"more restarts first":    {with(func(r *Rank) { r.MaxRestarts = 2 }), base},
		"more sidecar restarts":  {with(func(r *Rank) { r.SidecarRestarts = 1 }), base},
		"newer first":            {with(func(r *Rank) { r.Created = now }), base},
		"unknown creation first": {with(func(r *Rank) { r.Created = time.Time{} }), base},
	} {
		if c := Active(pair[0], pair[1]); c >= 0 {
			t.Errorf("%s: Active = %d, want < 0", name, c)
		}
		if c := Active(pair[1], pair[0]); c <= 0 {
			t.Errorf("%s, reversed: Active = %d, want > 0", name, c)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now)}, Spec: corev1.PodSpec{NodeName: "n"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now)}}}}
	if r := RankOf(pod); !r.Scheduled || !r.Ready || !r.ReadySince.Equal(metav1.NewTime(now).Time) || r.Phase != corev1.PodRunning {
		t.Errorf("RankOf = %+v", r)
	}
}
