package cloneset

import (
	"errors"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func inPlaceUpdating(p *PodFacts) { p.InPlaceUpdating = true }
func readyFor(d time.Duration) func(*PodFacts) {
	return func(p *PodFacts) { p.Ready, p.ReadySince = true, t0.Add(-d) }
}
func minReadySeconds(s int32) func(*Snapshot) {
	return func(sn *Snapshot) { sn.Spec.MinReadySeconds = s }
}

// counters are the counter fields of a status, for compact table rows.
type counters struct {
	replicas, ready, available, updated, updatedReady, updatedAvailable, expectedUpdated int32
}

func countersOf(st v1alpha1.CloneSetStatus) counters {
	return counters{st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.UpdatedReplicas,
		st.UpdatedReadyReplicas, st.UpdatedAvailableReplicas, st.ExpectedUpdatedReplicas}
}

func TestComputeStatusCounters(t *testing.T) {
	tests := []struct {
		name string
		snap *Snapshot
		want counters
	}{
		{"no pods: all counters zero, expected updated is replicas",
			cs(3), counters{expectedUpdated: 3}},
		{"replicas counts pods that are not terminating, of either revision",
			cs(4, pods("a", "v1", 2), pods("b", "v2", 2), pods("t", "v1", 1, terminating), pods("u", "v2", 1, terminating)),
			counters{4, 4, 4, 2, 2, 2, 4}},
		{"readyReplicas counts ready pods of either revision",
			cs(4, pods("a", "v1", 1), pods("b", "v1", 1, notReady), pods("c", "v2", 1), pods("d", "v2", 1, unscheduled)),
			counters{4, 2, 2, 2, 1, 1, 4}},
		{"availableReplicas waits for minReadySeconds",
			cs(3, minReadySeconds(30), pods("a", "v1", 1, readyFor(time.Minute)), pods("b", "v2", 1, readyFor(10*time.Second)),
				pods("c", "v2", 1, readyFor(30*time.Second))),
			counters{3, 3, 2, 2, 2, 1, 3}},
		{"a ready pod with unknown ready time counts as available",
			cs(1, minReadySeconds(30), pods("a", "v2", 1, func(p *PodFacts) { p.ReadySince = time.Time{} })),
			counters{1, 1, 1, 1, 1, 1, 1}},
		{"updatedReplicas counts pods at the update revision, in-place updating included",
			cs(3, pods("a", "v1", 1), pods("b", "v2", 1), pods("c", "v2", 1, inPlaceUpdating)),
			counters{3, 3, 2, 2, 1, 1, 3}},
		{"a pod whose in-place update has not completed is neither updated-ready nor available",
			cs(2, pods("a", "v2", 2, inPlaceUpdating)),
			counters{2, 2, 0, 2, 0, 0, 2}},
		{"updatedAvailableReplicas counts updated pods past minReadySeconds only",
			cs(3, minReadySeconds(60), pods("a", "v2", 1, readyFor(2*time.Minute)), pods("b", "v2", 1, readyFor(time.Second)),
				pods("c", "v1", 1, readyFor(2*time.Minute))),
			counters{3, 3, 2, 2, 2, 1, 3}},
		{"surge pods above spec.replicas are counted",
			cs(2, maxSurge("1"), pods("a", "v1", 2), pods("b", "v2", 1)),
			counters{3, 3, 3, 1, 1, 1, 2}},
		{"expectedUpdatedReplicas is replicas minus a numeric partition",
			cs(5, partition("3"), pods("a", "v1", 5)),
			counters{5, 5, 5, 0, 0, 0, 2}},
		{"expectedUpdatedReplicas rounds a percent partition up (fewer pods updated)",
			cs(5, partition("50%"), pods("a", "v1", 5)),
			counters{5, 5, 5, 0, 0, 0, 2}},
		{"expectedUpdatedReplicas keeps one pod to update for a percent partition below 100%",
			cs(5, partition("99%"), pods("a", "v1", 5)),
			counters{5, 5, 5, 0, 0, 0, 1}},
		{"expectedUpdatedReplicas is zero for a 100% partition",
			cs(5, partition("100%"), pods("a", "v1", 5)),
			counters{5, 5, 5, 0, 0, 0, 0}},
		{"expectedUpdatedReplicas is zero when the partition exceeds replicas",
			cs(2, partition("7"), pods("a", "v1", 2)),
			counters{2, 2, 2, 0, 0, 0, 0}},
		{"expectedUpdatedReplicas follows spec.replicas, not the pods that exist",
			cs(6, partition("2"), pods("a", "v2", 1)),
			counters{1, 1, 1, 1, 1, 1, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := countersOf(ComputeStatus(tt.snap, t0, v1alpha1.CloneSetStatus{}, 1, ApplyErrors{}))
			if got != tt.want {
				t.Errorf("counters = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestComputeStatusCarriesIdentity(t *testing.T) {
	old := v1alpha1.CloneSetStatus{ObservedGeneration: 3, UpdateRevision: "v1", CurrentRevision: "v1",
		CollisionCount: ptr.To[int32](2), Replicas: 9, ReadyReplicas: 9}
	st := ComputeStatus(cs(1, pods("a", "v1", 1)), t0, old, 4, ApplyErrors{})
	if st.ObservedGeneration != 4 {
		t.Errorf("observedGeneration = %d, want the generation passed in (4)", st.ObservedGeneration)
	}
	if st.UpdateRevision != "v2" {
		t.Errorf("updateRevision = %q, want the snapshot's (v2)", st.UpdateRevision)
	}
	if st.CollisionCount == nil || *st.CollisionCount != 2 {
		t.Errorf("collisionCount = %v, want 2 carried over", st.CollisionCount)
	}
	if st.Replicas != 1 || st.ReadyReplicas != 1 {
		t.Errorf("replicas/ready = %d/%d, want 1/1 recomputed from pods, not carried over", st.Replicas, st.ReadyReplicas)
	}
	if st = ComputeStatus(cs(1), t0, v1alpha1.CloneSetStatus{}, 1, ApplyErrors{}); st.CollisionCount != nil {
		t.Errorf("collisionCount = %d, want nil when old has none", *st.CollisionCount)
	}
}

func TestComputeStatusCurrentRevision(t *testing.T) {
	tests := []struct {
		name string
		snap *Snapshot
		want string
	}{
		{"an empty current revision starts at the update revision",
			cs(3, func(s *Snapshot) { s.CurrentRevision = "" }), "v2"},
		{"stays while one old pod remains",
			cs(3, pods("a", "v2", 2), pods("b", "v1", 1)), "v1"},
		{"stays while the partition keeps old pods",
			cs(4, partition("1"), pods("a", "v2", 3), pods("b", "v1", 1)), "v1"},
		{"moves when every pod is at the update revision",
			cs(3, pods("a", "v2", 3)), "v2"},
		{"moves before the updated pods are ready: the rule is updated, not ready",
			cs(3, pods("a", "v2", 3, notReady)), "v2"},
		{"moves while the last in-place updates are still completing",
			cs(2, pods("a", "v2", 2, inPlaceUpdating)), "v2"},
		{"moves when a raised partition leaves no old pod",
			cs(3, partition("2"), pods("a", "v2", 3)), "v2"},
		{"stays while fewer pods than replicas exist, so partition pods are created at it",
			cs(5, partition("2"), pods("a", "v2", 3)), "v1"},
		{"stays during scale-out even without partition",
			cs(5, pods("a", "v2", 3)), "v1"},
		{"ignores terminating old pods",
			cs(2, pods("a", "v2", 2), pods("b", "v1", 1, terminating)), "v2"},
		{"stays while surge pods above replicas remain, all updated (OpenKruise: exactly spec.replicas)",
			cs(2, maxSurge("1"), pods("a", "v2", 3)), "v1"},
		{"moves when scaled to zero",
			cs(0, pods("b", "v1", 1, terminating)), "v2"},
		{"moves while paused once every pod is updated",
			cs(2, paused, pods("a", "v2", 2)), "v2"},
		{"stays at an unchanged revision",
			cs(2, func(s *Snapshot) { s.CurrentRevision = "v2" }, pods("a", "v2", 2)), "v2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := ComputeStatus(tt.snap, t0, v1alpha1.CloneSetStatus{}, 1, ApplyErrors{})
			if st.CurrentRevision != tt.want {
				t.Errorf("currentRevision = %q, want %q (updated %d of %d pods, spec.replicas %d)",
					st.CurrentRevision, tt.want, st.UpdatedReplicas, st.Replicas, *tt.snap.Spec.Replicas)
			}
		})
	}
}

func cond(tp v1alpha1.CloneSetConditionType, status corev1.ConditionStatus, reason, msg string, trans, upd time.Time) v1alpha1.CloneSetCondition {
	return v1alpha1.CloneSetCondition{Type: tp, Status: status, Reason: reason, Message: msg,
		LastTransitionTime: metav1.NewTime(trans), LastUpdateTime: metav1.NewTime(upd)}
}

func TestComputeStatusConditions(t *testing.T) {
	const (
		scale  = v1alpha1.CloneSetConditionFailedScale
		update = v1alpha1.CloneSetConditionFailedUpdate
		yes    = corev1.ConditionTrue
		no     = corev1.ConditionFalse
	)
	before, now := t0.Add(-time.Hour), t0
	quota := errors.New("create pod: exceeded quota")
	conflict := errors.New("patch pod a-0: conflict")
	tests := []struct {
		name string
		old  []v1alpha1.CloneSetCondition
		errs ApplyErrors
		want []v1alpha1.CloneSetCondition
	}{
		{"no error and no condition adds nothing", nil, ApplyErrors{}, nil},
		{"a scale error adds FailedScale True at now",
			nil, ApplyErrors{Scale: quota},
			[]v1alpha1.CloneSetCondition{cond(scale, yes, ReasonScaleError, quota.Error(), now, now)}},
		{"an update error adds FailedUpdate True at now",
			nil, ApplyErrors{Update: conflict},
			[]v1alpha1.CloneSetCondition{cond(update, yes, ReasonUpdateError, conflict.Error(), now, now)}},
		{"the same scale error again keeps both times",
			[]v1alpha1.CloneSetCondition{cond(scale, yes, ReasonScaleError, quota.Error(), before, before)},
			ApplyErrors{Scale: quota},
			[]v1alpha1.CloneSetCondition{cond(scale, yes, ReasonScaleError, quota.Error(), before, before)}},
		{"a different scale error keeps lastTransitionTime and moves lastUpdateTime",
			[]v1alpha1.CloneSetCondition{cond(scale, yes, ReasonScaleError, "old error", before, before)},
			ApplyErrors{Scale: quota},
			[]v1alpha1.CloneSetCondition{cond(scale, yes, ReasonScaleError, quota.Error(), before, now)}},
		{"recovery turns FailedScale False with a new lastTransitionTime",
			[]v1alpha1.CloneSetCondition{cond(scale, yes, ReasonScaleError, quota.Error(), before, before)},
			ApplyErrors{},
			[]v1alpha1.CloneSetCondition{cond(scale, no, ReasonScaleSucceeded, "", now, now)}},
		{"a False condition stays unchanged while there is no error",
			[]v1alpha1.CloneSetCondition{cond(scale, no, ReasonScaleSucceeded, "", before, before)},
			ApplyErrors{},
			[]v1alpha1.CloneSetCondition{cond(scale, no, ReasonScaleSucceeded, "", before, before)}},
		{"a False condition turns True again at now",
			[]v1alpha1.CloneSetCondition{cond(scale, no, ReasonScaleSucceeded, "", before, before)},
			ApplyErrors{Scale: quota},
			[]v1alpha1.CloneSetCondition{cond(scale, yes, ReasonScaleError, quota.Error(), now, now)}},
		{"a False condition with a foreign reason is rewritten without a transition",
			[]v1alpha1.CloneSetCondition{cond(update, no, "", "", before, before)},
			ApplyErrors{},
			[]v1alpha1.CloneSetCondition{cond(update, no, ReasonUpdateSucceeded, "", before, now)}},
		{"an update error is appended after an existing FailedScale, which recovers in place",
			[]v1alpha1.CloneSetCondition{cond(scale, yes, ReasonScaleError, quota.Error(), before, before)},
			ApplyErrors{Update: conflict},
			[]v1alpha1.CloneSetCondition{cond(scale, no, ReasonScaleSucceeded, "", now, now),
				cond(update, yes, ReasonUpdateError, conflict.Error(), now, now)}},
		{"both errors on an existing list keep its order",
			[]v1alpha1.CloneSetCondition{cond(update, no, ReasonUpdateSucceeded, "", before, before),
				cond(scale, no, ReasonScaleSucceeded, "", before, before)},
			ApplyErrors{Scale: quota, Update: conflict},
			[]v1alpha1.CloneSetCondition{cond(update, yes, ReasonUpdateError, conflict.Error(), now, now),
				cond(scale, yes, ReasonScaleError, quota.Error(), now, now)}},
		{"conditions of other types are carried over untouched",
			[]v1alpha1.CloneSetCondition{cond("Custom", yes, "Someone", "someone else's", before, before)},
			ApplyErrors{Scale: quota},
			[]v1alpha1.CloneSetCondition{cond("Custom", yes, "Someone", "someone else's", before, before),
				cond(scale, yes, ReasonScaleError, quota.Error(), now, now)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := v1alpha1.CloneSetStatus{Conditions: tt.old}
			got := ComputeStatus(cs(1, pods("a", "v2", 1)), now, old, 1, tt.errs).Conditions
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("conditions:\n got  %+v\n want %+v", got, tt.want)
			}
		})
	}
}

func TestComputeStatusLabelSelector(t *testing.T) {
	tests := []struct {
		name string
		sel  *metav1.LabelSelector
		want string
	}{
		{"nil selector gives an empty string", nil, ""},
		{"matchLabels are joined in key order",
			&metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web", "app": "sample"}},
			"app=sample,tier=web"},
		{"matchExpressions of every operator, merged with matchLabels in key order",
			&metav1.LabelSelector{
				MatchLabels: map[string]string{"app": "sample"},
				MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"b", "a"}},
					{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"dev"}},
					{Key: "canary", Operator: metav1.LabelSelectorOpDoesNotExist},
					{Key: "owner", Operator: metav1.LabelSelectorOpExists},
				}},
			"app=sample,!canary,env notin (dev),owner,zone in (a,b)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := cs(1, func(s *Snapshot) { s.Spec.Selector = tt.sel })
			got := ComputeStatus(snap, t0, v1alpha1.CloneSetStatus{}, 1, ApplyErrors{}).LabelSelector
			if got != tt.want {
				t.Fatalf("labelSelector = %q, want %q", got, tt.want)
			}
			if tt.sel == nil {
				return
			}
			// The scale subresource hands this string to clients (HPA, kubectl) that parse it.
			parsed, err := labels.Parse(got)
			if err != nil {
				t.Fatalf("labels.Parse(%q): %v", got, err)
			}
			want, _ := metav1.LabelSelectorAsSelector(tt.sel)
			if parsed.String() != want.String() {
				t.Errorf("parsed %q, want the selector %q", parsed, want)
			}
		})
	}
}

// TestComputeStatusIsPure checks that ComputeStatus leaves its inputs alone, gives the same status
// twice, and returns nothing that aliases old.
func TestComputeStatusIsPure(t *testing.T) {
	snapOf := func() *Snapshot {
		return cs(5, partition("1"), minReadySeconds(10), func(s *Snapshot) {
			s.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sample"}}
		}, pods("a", "v1", 2), pods("b", "v2", 2, inPlaceUpdating), pods("c", "v2", 1, readyFor(time.Second)),
			pods("d", "v1", 1, terminating))
	}
	oldOf := func() v1alpha1.CloneSetStatus {
		return v1alpha1.CloneSetStatus{CurrentRevision: "v1", CollisionCount: ptr.To[int32](1),
			Conditions: []v1alpha1.CloneSetCondition{
				cond(v1alpha1.CloneSetConditionFailedScale, corev1.ConditionTrue, ReasonScaleError, "x", t0, t0),
				cond("Progressing", corev1.ConditionTrue, "CloneSetUpdated", "", t0, t0)}}
	}
	snap, old := snapOf(), oldOf()
	errs := ApplyErrors{Update: errors.New("boom")}
	first := ComputeStatus(snap, t0, old, 7, errs)
	second := ComputeStatus(snap, t0, old, 7, errs)
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("two calls differ:\n%+v\n%+v", first, second)
	}
	if !reflect.DeepEqual(snap, snapOf()) {
		t.Errorf("snapshot modified")
	}
	if !reflect.DeepEqual(old, oldOf()) {
		t.Errorf("old status modified:\n got  %+v\n want %+v", old, oldOf())
	}
	*first.CollisionCount = 42
	first.Conditions[0].Message = "changed"
	if !reflect.DeepEqual(old, oldOf()) {
		t.Errorf("the result aliases old: writing the result changed old to %+v", old)
	}
}
