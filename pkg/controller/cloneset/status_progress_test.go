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

// The strings tools built for OpenKruise compare against: OpenKruise v1.9's constant values, not
// its constant names.
func TestProgressReasonsAreOpenKruises(t *testing.T) {
	for got, want := range map[string]string{
		ReasonProgressUpdated:                         "CloneSetUpdated",
		ReasonProgressAvailable:                       "CloneSetAvailable",
		ReasonProgressPaused:                          "CloneSetPaused",
		ReasonProgressPartitionAvailable:              "ProgressPartitionAvailable",
		ReasonProgressDeadlineExceeded:                "ProgressDeadlineExceeded",
		string(v1alpha1.CloneSetConditionProgressing): "Progressing",
	} {
		if got != want {
			t.Errorf("reason %q, want %q", got, want)
		}
	}
}

func TestProgressCondition(t *testing.T) {
	yes, no := corev1.ConditionTrue, corev1.ConditionFalse
	earlier := t0.Add(-time.Minute) // when the stored condition was set
	const (
		progressingMsg = "CloneSet is progressing"
		availableMsg   = "CloneSet is available"
		pausedMsg      = "CloneSet is paused"
		partitionMsg   = "CloneSet has been paused due to partition ready"
		exceededV2     = "CloneSet revision v2 has timed out progressing"
	)
	stored := func(status corev1.ConditionStatus, reason, msg string) v1alpha1.CloneSetCondition {
		return cond(v1alpha1.CloneSetConditionProgressing, status, reason, msg, earlier.Add(-time.Hour), earlier)
	}
	progressing := stored(yes, ReasonProgressUpdated, progressingMsg)
	exceeded := stored(no, ReasonProgressDeadlineExceeded, exceededV2)
	available := stored(yes, ReasonProgressAvailable, availableMsg)
	pausedCond := stored(yes, ReasonProgressPaused, pausedMsg)
	storedTransition := earlier.Add(-time.Hour)
	// A stuck rollout: 4 pods, one updated but never ready again (in its in-place update).
	stuck := func(mut ...func(*Snapshot)) *Snapshot {
		return cs(4, append([]func(*Snapshot){pods("a", "v1", 3), pods("b", "v2", 1, inPlaceUpdating, notReady)}, mut...)...)
	}
	stuckOld := v1alpha1.CloneSetStatus{UpdateRevision: "v2", CurrentRevision: "v1", UpdatedReplicas: 1}
	rolledOut := func(mut ...func(*Snapshot)) *Snapshot {
		return cs(4, append([]func(*Snapshot){pods("a", "v2", 4), func(s *Snapshot) { s.CurrentRevision = "v2" }}, mut...)...)
	}
	tests := []struct {
		name   string
		snap   *Snapshot
		old    v1alpha1.CloneSetStatus
		status corev1.ConditionStatus // "" = no condition
		reason string
		msg    string
		trans  time.Time // lastTransitionTime
		update time.Time // lastUpdateTime
	}{
		{"HasProgressDeadline: no progressDeadlineSeconds removes the condition", stuck(),
			withCond(stuckOld, progressing), "", "", "", time.Time{}, time.Time{}},
		{"HasProgressDeadline: MaxInt32 means no deadline", stuck(deadline(math.MaxInt32)),
			withCond(stuckOld, progressing), "", "", "", time.Time{}, time.Time{}},
		{"CloneSetAvailable: all replicas updated and available at the current revision", rolledOut(deadline(30)),
			v1alpha1.CloneSetStatus{}, yes, ReasonProgressAvailable, availableMsg, t0, t0},
		{"CloneSetAvailable is decided before paused", rolledOut(deadline(30), paused),
			v1alpha1.CloneSetStatus{}, yes, ReasonProgressAvailable, availableMsg, t0, t0},
		{"CloneSetBePaused is decided before partition-available and the deadline (same status: transition kept)",
			stuck(deadline(30), paused), withCond(stuckOld, progressing),
			yes, ReasonProgressPaused, pausedMsg, storedTransition, t0},
		{"CloneSetPartitionAvailable: expected < replicas and expected <= updated available",
			cs(4, deadline(30), partition("3"), pods("a", "v1", 3), pods("b", "v2", 1)), v1alpha1.CloneSetStatus{},
			yes, ReasonProgressPartitionAvailable, partitionMsg, t0, t0},
		{"CloneSetPartitionAvailable is decided before an old lastUpdateTime",
			cs(4, deadline(30), partition("3"), pods("a", "v1", 3), pods("b", "v2", 1)), withCond(stuckOld, progressing),
			yes, ReasonProgressPartitionAvailable, partitionMsg, storedTransition, t0},
		{"CloneSetPartitionAvailable needs a partition: no partition, not all updated is progressing",
			cs(4, deadline(30), pods("a", "v1", 3), pods("b", "v2", 1)), v1alpha1.CloneSetStatus{},
			yes, ReasonProgressUpdated, progressingMsg, t0, t0},
		{"default: a rollout starts Updated, both times now", stuck(deadline(30)), v1alpha1.CloneSetStatus{},
			yes, ReasonProgressUpdated, progressingMsg, t0, t0},
		{"SetCloneSetCondition: same status and reason keep the stored condition", stuck(deadline(90)),
			withCond(stuckOld, progressing), yes, ReasonProgressUpdated, progressingMsg, storedTransition, earlier},
		{"SetCloneSetCondition: the stored message is kept too", stuck(deadline(90)),
			withCond(stuckOld, stored(yes, ReasonProgressUpdated, "CloneSet is resumed")),
			yes, ReasonProgressUpdated, "CloneSet is resumed", storedTransition, earlier},
		{"progress does not refresh lastUpdateTime: more pods updated than stored", stuck(deadline(90)),
			withCond(v1alpha1.CloneSetStatus{UpdateRevision: "v2", CurrentRevision: "v1"}, progressing),
			yes, ReasonProgressUpdated, progressingMsg, storedTransition, earlier},
		{"CloneSetDeadlineExceeded: lastUpdateTime + pds before now turns False, both times now", stuck(deadline(59)),
			withCond(stuckOld, progressing), no, ReasonProgressDeadlineExceeded, exceededV2, t0, t0},
		{"CloneSetDeadlineExceeded: exactly at the deadline is not yet exceeded", stuck(deadline(60)),
			withCond(stuckOld, progressing), yes, ReasonProgressUpdated, progressingMsg, storedTransition, earlier},
		{"CloneSetDeadlineExceeded: a stored exceeded condition stays, even with progress", stuck(deadline(600)),
			withCond(v1alpha1.CloneSetStatus{UpdateRevision: "v2"}, exceeded),
			no, ReasonProgressDeadlineExceeded, exceededV2, storedTransition, earlier},
		{"CloneSetDeadlineExceeded: a new revision keeps it, naming the revision that timed out", stuck(deadline(600)),
			withCond(v1alpha1.CloneSetStatus{UpdateRevision: "v1"},
				stored(no, ReasonProgressDeadlineExceeded, "CloneSet revision v1 has timed out progressing")),
			no, ReasonProgressDeadlineExceeded, "CloneSet revision v1 has timed out progressing", storedTransition, earlier},
		{"CloneSetAvailable ends an exceeded rollout, both times now", rolledOut(deadline(30)),
			withCond(v1alpha1.CloneSetStatus{UpdateRevision: "v2"}, exceeded), yes, ReasonProgressAvailable, availableMsg, t0, t0},
		{"no revision check: a new revision while Updated does not restart the deadline", stuck(deadline(59)),
			withCond(v1alpha1.CloneSetStatus{UpdateRevision: "v1", CurrentRevision: "v1"}, progressing),
			no, ReasonProgressDeadlineExceeded, exceededV2, t0, t0},
		{"a new revision after a recent Available: Updated, lastTransitionTime kept, lastUpdateTime now",
			stuck(deadline(90)), withCond(v1alpha1.CloneSetStatus{UpdateRevision: "v1", CurrentRevision: "v1"}, available),
			yes, ReasonProgressUpdated, progressingMsg, storedTransition, t0},
		// Kruise's deliberate difference: OpenKruise times these out at once.
		{"a new revision after an Available older than the deadline: Updated, the deadline starts now", stuck(deadline(59)),
			withCond(v1alpha1.CloneSetStatus{UpdateRevision: "v1", CurrentRevision: "v1"}, available),
			yes, ReasonProgressUpdated, progressingMsg, storedTransition, t0},
		{"resumed after a pause shorter than the deadline: Updated, 'CloneSet is progressing'", stuck(deadline(90)),
			withCond(stuckOld, pausedCond), yes, ReasonProgressUpdated, progressingMsg, storedTransition, t0},
		{"resumed after a pause longer than the deadline: Updated, the deadline starts now (paused time does not count)", stuck(deadline(59)),
			withCond(stuckOld, pausedCond), yes, ReasonProgressUpdated, progressingMsg, storedTransition, t0},
		{"paused ends an exceeded rollout, both times now (status changes)", stuck(deadline(30), paused),
			withCond(stuckOld, exceeded), yes, ReasonProgressPaused, pausedMsg, t0, t0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := ComputeStatus(tt.snap, t0, tt.old, 1, ApplyErrors{})
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
			if c.Status != tt.status || c.Reason != tt.reason || c.Message != tt.msg ||
				!c.LastTransitionTime.Time.Equal(tt.trans) || !c.LastUpdateTime.Time.Equal(tt.update) {
				t.Errorf("got %s %s %q transition %v updated %v;\nwant %s %s %q transition %v updated %v",
					c.Status, c.Reason, c.Message, c.LastTransitionTime.Time, c.LastUpdateTime.Time,
					tt.status, tt.reason, tt.msg, tt.trans, tt.update)
			}
		})
	}
}

// The deadline runs from the moment the rollout turned Updated, not from its last progress: a
// rollout whose pods become updated and available one by one, each within progressDeadlineSeconds
// of the last but slower than it in total, is exceeded, stays so while it goes on, and is Available
// when it finishes. The reconciler requeues at ProgressDeadline (plus a second).
func TestProgressSequenceSlowerThanDeadline(t *testing.T) {
	const pds = 60
	type step struct {
		at       time.Duration // after the revision change at t0
		updated  int           // pods updated and available out of 4
		status   corev1.ConditionStatus
		reason   string
		trans    time.Duration
		update   time.Duration
		deadline time.Duration // ProgressDeadline - t0; -1: none
	}
	steps := []step{
		{0, 0, corev1.ConditionTrue, ReasonProgressUpdated, -2 * time.Minute, 0, pds * time.Second},
		{40 * time.Second, 1, corev1.ConditionTrue, ReasonProgressUpdated, -2 * time.Minute, 0, pds * time.Second},
		{61 * time.Second, 1, corev1.ConditionFalse, ReasonProgressDeadlineExceeded, 61 * time.Second, 61 * time.Second, -1},
		{80 * time.Second, 2, corev1.ConditionFalse, ReasonProgressDeadlineExceeded, 61 * time.Second, 61 * time.Second, -1},
		{120 * time.Second, 3, corev1.ConditionFalse, ReasonProgressDeadlineExceeded, 61 * time.Second, 61 * time.Second, -1},
		{160 * time.Second, 4, corev1.ConditionTrue, ReasonProgressAvailable, 160 * time.Second, 160 * time.Second, -1},
	}
	// Rolled out to v1 two minutes ago, Available since 30s ago (within the deadline).
	old := v1alpha1.CloneSetStatus{UpdateRevision: "v1", CurrentRevision: "v1", Replicas: 4, UpdatedReplicas: 4,
		UpdatedAvailableReplicas: 4, Conditions: []v1alpha1.CloneSetCondition{cond(v1alpha1.CloneSetConditionProgressing,
			corev1.ConditionTrue, ReasonProgressAvailable, "CloneSet is available", t0.Add(-2*time.Minute), t0.Add(-30*time.Second))}}
	for _, s := range steps {
		snap := cs(4, deadline(pds), pods("a", "v1", 4-s.updated), pods("b", "v2", s.updated))
		now := t0.Add(s.at)
		st := ComputeStatus(snap, now, old, 1, ApplyErrors{})
		c := st.Conditions[conditionIndex(st.Conditions, v1alpha1.CloneSetConditionProgressing)]
		if c.Status != s.status || c.Reason != s.reason || !c.LastTransitionTime.Time.Equal(t0.Add(s.trans)) ||
			!c.LastUpdateTime.Time.Equal(t0.Add(s.update)) {
			t.Errorf("t0+%v, %d updated: got %s %s %q transition %v updated %v; want %s %s transition t0%+v updated t0%+v",
				s.at, s.updated, c.Status, c.Reason, c.Message, c.LastTransitionTime.Time, c.LastUpdateTime.Time,
				s.status, s.reason, s.trans, s.update)
		}
		if s.reason == ReasonProgressDeadlineExceeded && c.Message != "CloneSet revision v2 has timed out progressing" {
			t.Errorf("t0+%v: message %q", s.at, c.Message)
		}
		at := ProgressDeadline(&snap.Spec, &st)
		if (s.deadline < 0) != at.IsZero() || (s.deadline >= 0 && !at.Equal(t0.Add(s.deadline))) {
			t.Errorf("t0+%v: ProgressDeadline %v, want t0+%v (-1: none)", s.at, at, s.deadline)
		}
		old = st
	}
}

func withCond(st v1alpha1.CloneSetStatus, c v1alpha1.CloneSetCondition) v1alpha1.CloneSetStatus {
	st.Conditions = []v1alpha1.CloneSetCondition{c}
	return st
}

// ProgressDeadline is lastUpdateTime + progressDeadlineSeconds of an Updated condition: at that
// instant the condition is still True, a second later (when the reconciler requeues) it is False.
func TestProgressDeadline(t *testing.T) {
	spec := &v1alpha1.CloneSetSpec{ProgressDeadlineSeconds: ptr.To[int32](30)}
	st := &v1alpha1.CloneSetStatus{Conditions: []v1alpha1.CloneSetCondition{
		cond(v1alpha1.CloneSetConditionProgressing, corev1.ConditionTrue, ReasonProgressUpdated, "", t0, t0)}}
	at := ProgressDeadline(spec, st)
	if !at.Equal(t0.Add(30 * time.Second)) {
		t.Errorf("deadline %v, want %v", at, t0.Add(30*time.Second))
	}
	snap := cs(4, deadline(30), pods("a", "v1", 3), pods("b", "v2", 1, inPlaceUpdating, notReady))
	old := withCond(v1alpha1.CloneSetStatus{UpdateRevision: "v2", CurrentRevision: "v1"}, st.Conditions[0])
	for _, tc := range []struct {
		now    time.Time
		reason string
	}{{at, ReasonProgressUpdated}, {at.Add(time.Second), ReasonProgressDeadlineExceeded}} {
		next := ComputeStatus(snap, tc.now, old, 1, ApplyErrors{})
		if r := next.Conditions[conditionIndex(next.Conditions, v1alpha1.CloneSetConditionProgressing)].Reason; r != tc.reason {
			t.Errorf("at %v: %s, want %s", tc.now, r, tc.reason)
		}
	}
	for _, reason := range []string{ReasonProgressPaused, ReasonProgressDeadlineExceeded, ReasonProgressAvailable,
		ReasonProgressPartitionAvailable} {
		st.Conditions[0].Reason = reason
		if got := ProgressDeadline(spec, st); !got.IsZero() {
			t.Errorf("a %s condition has deadline %v", reason, got)
		}
	}
}

// A changed Progressing condition moves to the end of the list, an unchanged one stays in place.
func TestSetProgressConditionOrder(t *testing.T) {
	prog := cond(v1alpha1.CloneSetConditionProgressing, corev1.ConditionTrue, ReasonProgressUpdated, "m", t0, t0)
	scale := cond(v1alpha1.CloneSetConditionFailedScale, corev1.ConditionTrue, ReasonScaleError, "x", t0, t0)
	list := func() []v1alpha1.CloneSetCondition { return []v1alpha1.CloneSetCondition{prog, scale} }
	if got := setProgressCondition(list(), &prog); got[0] != prog || len(got) != 2 {
		t.Errorf("unchanged condition moved: %+v", got)
	}
	changed := prog
	changed.Reason = ReasonProgressAvailable
	if got := setProgressCondition(list(), &changed); len(got) != 2 || got[0] != scale || got[1] != changed {
		t.Errorf("changed condition not moved to the end: %+v", got)
	}
	if got := setProgressCondition(list(), nil); len(got) != 1 || got[0] != scale {
		t.Errorf("nil did not remove: %+v", got)
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
