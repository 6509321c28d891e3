package cloneset

import (
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func deadline(s int32) func(*Snapshot) {
	return func(snap *Snapshot) { snap.Spec.ProgressDeadlineSeconds = ptr.To(s) }
}

func TestProgressCondition(t *testing.T) {
	yes, no := corev1.ConditionTrue, corev1.ConditionFalse
	earlier := t0.Add(-time.Minute)
	progressing := cond(v1alpha1.CloneSetConditionProgressing, yes, ReasonProgressUpdated, "CloneSet is progressing", earlier, earlier)
	exceeded := cond(v1alpha1.CloneSetConditionProgressing, no, ReasonProgressDeadlineExceeded, "CloneSet revision v2 has timed out progressing", earlier, earlier)
	pausedCond := cond(v1alpha1.CloneSetConditionProgressing, yes, ReasonProgressPaused, "CloneSet is paused", earlier, earlier)
	// A stuck rollout: 4 pods, one updated but never ready again (in its in-place update).
	stuck := func(mut ...func(*Snapshot)) *Snapshot {
		return cs(4, append([]func(*Snapshot){pods("a", "v1", 3), pods("b", "v2", 1, inPlaceUpdating, notReady)}, mut...)...)
	}
	stuckOld := v1alpha1.CloneSetStatus{UpdateRevision: "v2", CurrentRevision: "v1", UpdatedReplicas: 1}
	tests := []struct {
		name   string
		snap   *Snapshot
		old    v1alpha1.CloneSetStatus
		now    time.Time
		status corev1.ConditionStatus // "" = no condition
		reason string
		msg    string
		update time.Time // lastUpdateTime
	}{
		{"no deadline: no condition", stuck(), v1alpha1.CloneSetStatus{Conditions: []v1alpha1.CloneSetCondition{progressing}}, t0, "", "", "", time.Time{}},
		{"MaxInt32 means no deadline", stuck(deadline(math.MaxInt32)), v1alpha1.CloneSetStatus{Conditions: []v1alpha1.CloneSetCondition{progressing}}, t0, "", "", "", time.Time{}},
		{"rolled out: available", cs(2, deadline(30), pods("a", "v2", 2), func(s *Snapshot) { s.CurrentRevision = "v2" }),
			v1alpha1.CloneSetStatus{}, t0, yes, ReasonProgressAvailable, "CloneSet is available", t0},
		{"paused", stuck(deadline(30), paused), stuckOld, t0, yes, ReasonProgressPaused, "CloneSet is paused", t0},
		{"stopped at the partition", cs(4, deadline(30), partition("3"), pods("a", "v1", 3), pods("b", "v2", 1)),
			v1alpha1.CloneSetStatus{}, t0, yes, ReasonProgressPartitionAvailable, "CloneSet has been paused due to partition ready", t0},
		{"a rollout starts", stuck(deadline(30)), v1alpha1.CloneSetStatus{}, t0, yes, ReasonProgressUpdated, "CloneSet is progressing", t0},
		{"no progress within the deadline: unchanged", stuck(deadline(90)), withCond(stuckOld, progressing), t0,
			yes, ReasonProgressUpdated, "CloneSet is progressing", earlier},
		{"no progress for the deadline: exceeded", stuck(deadline(60)), withCond(stuckOld, progressing), t0,
			no, ReasonProgressDeadlineExceeded, "CloneSet revision v2 has timed out progressing", t0},
		{"exceeded stays exceeded without progress", stuck(deadline(60)), withCond(stuckOld, exceeded), t0,
			no, ReasonProgressDeadlineExceeded, "CloneSet revision v2 has timed out progressing", earlier},
		{"progress after exceeding", stuck(deadline(60)), withCond(v1alpha1.CloneSetStatus{UpdateRevision: "v2"}, exceeded), t0,
			yes, ReasonProgressUpdated, "CloneSet is progressing", t0},
		{"a new revision is progress", stuck(deadline(60)), withCond(v1alpha1.CloneSetStatus{UpdateRevision: "v1", UpdatedReplicas: 1}, progressing), t0,
			yes, ReasonProgressUpdated, "CloneSet is progressing", t0},
		{"resumed: the deadline starts afresh", stuck(deadline(60)), withCond(stuckOld, pausedCond), t0,
			yes, ReasonProgressUpdated, "CloneSet is resumed", t0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := ComputeStatus(tt.snap, tt.now, tt.old, 1, ApplyErrors{})
			i := conditionIndex(st.Conditions, v1alpha1.CloneSetConditionProgressing)
			if tt.status == "" {
				if i >= 0 {
					t.Fatalf("condition %+v, want none", st.Conditions[i])
				}
				return
			}
			if i < 0 {
				t.Fatalf("no Progressing condition in %+v", st.Conditions)
			}
			c := st.Conditions[i]
			if c.Status != tt.status || c.Reason != tt.reason || c.Message != tt.msg || !c.LastUpdateTime.Time.Equal(tt.update) {
				t.Errorf("got %s %s %q updated %v; want %s %s %q updated %v", c.Status, c.Reason, c.Message, c.LastUpdateTime.Time,
					tt.status, tt.reason, tt.msg, tt.update)
			}
		})
	}
}

func withCond(st v1alpha1.CloneSetStatus, c v1alpha1.CloneSetCondition) v1alpha1.CloneSetStatus {
	st.Conditions = []v1alpha1.CloneSetCondition{c}
	return st
}

func TestProgressDeadline(t *testing.T) {
	spec := &v1alpha1.CloneSetSpec{ProgressDeadlineSeconds: ptr.To[int32](30)}
	st := &v1alpha1.CloneSetStatus{Conditions: []v1alpha1.CloneSetCondition{
		cond(v1alpha1.CloneSetConditionProgressing, corev1.ConditionTrue, ReasonProgressUpdated, "", t0, t0)}}
	if got := ProgressDeadline(spec, st); !got.Equal(t0.Add(30 * time.Second)) {
		t.Errorf("deadline %v, want %v", got, t0.Add(30*time.Second))
	}
	st.Conditions[0].Reason = ReasonProgressPaused
	if got := ProgressDeadline(spec, st); !got.IsZero() {
		t.Errorf("a paused rollout has deadline %v", got)
	}
}

func TestStatusPacingIgnoresLastUpdateTime(t *testing.T) {
	a := &v1alpha1.CloneSetStatus{Replicas: 4, Conditions: []v1alpha1.CloneSetCondition{
		cond(v1alpha1.CloneSetConditionProgressing, corev1.ConditionTrue, ReasonProgressUpdated, "m", t0, t0)}}
	b := a.DeepCopy()
	b.UpdatedReplicas = 2
	b.Conditions[0].LastUpdateTime.Time = t0.Add(time.Second)
	if significant(a, b, 4) {
		t.Error("progress that only moved lastUpdateTime was written at once")
	}
	b.Conditions[0].Reason = ReasonProgressDeadlineExceeded
	if !significant(a, b, 4) {
		t.Error("a changed reason was paced")
	}
}
