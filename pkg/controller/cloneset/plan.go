package cloneset

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
	"github.com/kruise-ng/kruise/pkg/core/updateorder"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// Options tunes the planner with what is not in the snapshot: the manager's feature gates.
type Options struct {
	// PartitionRollback (feature gate CloneSetPartitionRollback, off by default as in OpenKruise):
	// when the partition rises during a rollout, pods beyond replicas − partition at the update
	// revision go back to the current revision. Without it a higher partition only stops the rollout.
	PartitionRollback bool
	// PreparingUpdateAsUpdate (feature gate PreparingUpdateAsUpdate, off by default as in OpenKruise):
	// when scaling, a pod held in PreparingUpdate counts as at the update revision (its update is
	// under way), so the partition is kept with it counted as updated.
	PreparingUpdateAsUpdate bool
	// ScalingExcludePreparingDelete (kruise-manager --cloneset-scaling-exclude-preparing-delete,
	// off by default as in OpenKruise; per CloneSet its label
	// apps.kruise.io/cloneset-scaling-exclude-preparing-delete: "true", Snapshot): a pod held in
	// PreparingDelete does not count when scaling out, so its replacement is created at once.
	ScalingExcludePreparingDelete bool
}

// ScalingExcludePreparingDeleteLabel on a CloneSet is ScalingExcludePreparingDelete for it alone
// (OpenKruise's label).
const ScalingExcludePreparingDeleteLabel = "apps.kruise.io/cloneset-scaling-exclude-preparing-delete"

// DeleteKind says why a pod is deleted.
type DeleteKind string

const (
	// DeleteScaleIn removes a pod beyond replicas (plus the surge allowed while updating).
	DeleteScaleIn DeleteKind = "ScaleIn"
	// DeleteSpecified removes a pod the user asked to delete; it is replaced.
	DeleteSpecified DeleteKind = "Specified"
	// DeletePrepared removes a pod whose deletion began earlier (it is in PreparingDelete) and
	// stands: its preDelete hook has let it go. It is replaced when replicas need it.
	DeletePrepared DeleteKind = "Prepared"
)

// UpdateMode says how a pod moves to the update revision.
type UpdateMode string

const (
	// UpdateInPlace patches the live pod (pkg/core/inplace).
	UpdateInPlace UpdateMode = "InPlace"
	// UpdateRecreate deletes the pod; a pod of the update revision is created in its place.
	UpdateRecreate UpdateMode = "Recreate"
)

// Creation is one pod to create.
type Creation struct {
	// Revision is the revision the new pod gets.
	Revision string
	// InstanceID reuses the instance ID (and so the PVCs) of a deleted pod; empty for a new one.
	InstanceID string
	// Reason says why it is created.
	Reason string
}

// Deletion is one pod to delete.
type Deletion struct {
	Pod    string
	Kind   DeleteKind
	Reason string
}

// Update is one pod to move to the update revision.
type Update struct {
	Pod string
	// From is the pod's revision before the update.
	From string
	// To is the revision the pod moves to: the update revision, or the current revision when a
	// raised partition rolls it back (Options.PartitionRollback).
	To   string
	Mode UpdateMode
	// Spec is the in-place update; nil for a recreate.
	Spec   *inplace.UpdateSpec
	Reason string
	// Unpaid: the plan did not count the pod available, so its update cost the maxUnavailable
	// budget nothing.
	Unpaid bool
}

// LifecycleMove puts a pod in a lifecycle state (pkg/core/lifecycle): holding it for a hook, or
// releasing it after one. MarkNotReady sets the pod's KruisePodReady condition False with the move
// (the hook's markPodNotReady); the pod readiness controller sets it True once the pod leaves the
// hook.
type LifecycleMove = lifecycle.Move

// Refusal is a pod that needs an update the update type does not allow (InPlaceOnly and a change
// that cannot be applied in place). Status reports it; the pod is left alone.
type Refusal = podcontrol.Refusal

// Bounds are the numbers the plan was computed with, resolved from int-or-percent values.
type Bounds struct {
	Replicas       int
	Partition      int
	MaxUnavailable int
	MaxSurge       int
	// ScaleMaxUnavailable bounds creations while pods are unavailable; -1 means unbounded.
	ScaleMaxUnavailable int
	// ExpectedUpdated is replicas − partition (status.expectedUpdatedReplicas).
	ExpectedUpdated int
}

// Plan is what the controller should do now, each action with a human-readable reason.
type Plan struct {
	Creates  []Creation
	Deletes  []Deletion
	Updates  []Update
	Refusals []Refusal
	// ReleaseInstanceIDs are free instance IDs whose PVCs are deleted (scaleStrategy.disablePVCReuse).
	ReleaseInstanceIDs []string
	// Lifecycle are the lifecycle state changes.
	Lifecycle []LifecycleMove
	// Resumes are pods whose deferred in-place update has waited out its grace period: its
	// container changes are applied now.
	Resumes []string
	// Notes explain waits, e.g. "2 unavailable ≥ maxUnavailable 2 (replicas 5, 3 available): 1 update waiting".
	Notes []string
	// ScaleUpLimit, when scaleStrategy.maxUnavailable holds creations back, is how many it allows
	// (OpenKruise's ScaleUpLimited event); nil otherwise.
	ScaleUpLimit *int
	// NextDeadline is the earliest time at which the plan may change without any event (a pod
	// passing minReadySeconds, a grace period ending); zero when there is none.
	NextDeadline time.Time
	Bounds       Bounds
}

// RequeueAfter is how long to wait before planning again when no event arrives; 0 means no need.
func (p *Plan) RequeueAfter(now time.Time) time.Duration {
	if p.NextDeadline.IsZero() {
		return 0
	}
	if d := p.NextDeadline.Sub(now); d > 0 {
		return d
	}
	return time.Nanosecond
}

// Empty reports whether the plan does nothing.
func (p *Plan) Empty() bool {
	return len(p.Creates) == 0 && len(p.Deletes) == 0 && len(p.Updates) == 0 && len(p.Resumes) == 0 && len(p.Lifecycle) == 0 &&
		len(p.ReleaseInstanceIDs) == 0
}

// Compute plans one reconcile of a CloneSet. It is pure: the same snapshot, now and options give
// the same plan. See the package documentation for its invariants.
func Compute(snap *Snapshot, now time.Time, opts Options) Plan {
	pl := newPlanner(snap, now, opts)
	pl.planPreparingDelete()
	pl.planScaleIn()
	pl.planSpecifiedDeletes()
	pl.planUpdates()
	pl.planRollback()
	pl.planCreates()
	pl.planReleasePVCs()
	pl.planResumes()
	pl.planLifecycle()
	pl.planDeadline()
	return pl.plan
}

// planner holds the state of one Compute call: the snapshot and what the plan has done so far.
type planner struct {
	snap     *Snapshot
	now      time.Time
	opts     Options
	minReady time.Duration
	b        Bounds
	surge    int // surge allowed now: ≤ MaxSurge, only while an update or a replacement needs it
	active   []*PodFacts
	gone     map[string]bool // deleted (or recreated) by this plan
	touched  map[string]bool // updated in place by this plan
	rolled   map[string]bool // moved back to the current revision in place by this plan
	held     map[string]bool // to delete, but held in PreparingDelete by the preDelete hook
	// committed are the pods in PreparingDelete whose deletion stands (planPreparingDelete),
	// cancelled those whose deletion it cancelled.
	committed, cancelled map[string]bool
	avail                map[string]bool // available pods, as the plan leaves them so far
	plan                 Plan
	// aliveMemo and keepMemo are alive() and keep() since gone and held last changed (nil: to
	// compute): the plan reads them a dozen times, and at 10,000 pods each is a list of 10,000.
	aliveMemo, keepMemo []*PodFacts
}

func newPlanner(snap *Snapshot, now time.Time, opts Options) *planner {
	pl := &planner{
		snap: snap, now: now, opts: opts,
		minReady: time.Duration(snap.Spec.MinReadySeconds) * time.Second,
		gone:     map[string]bool{}, touched: map[string]bool{}, rolled: map[string]bool{}, held: map[string]bool{}, avail: map[string]bool{},
		committed: map[string]bool{}, cancelled: map[string]bool{},
	}
	for i := range snap.Pods {
		p := &snap.Pods[i]
		if p.Terminating {
			continue
		}
		pl.active = append(pl.active, p)
		if p.Available(now, pl.minReady) || p.servingBeforeNormal(now, pl.minReady) {
			pl.avail[p.Name] = true
		}
	}
	pl.b = ComputeBounds(&snap.Spec)
	pl.surge = pl.computeSurge()
	pl.plan.Bounds = pl.b
	return pl
}

// ComputeBounds resolves replicas, partition, maxUnavailable and maxSurge.
//   - partition rounds up (fewer pods updated), is clamped to [0, replicas], and a percentage below
//     100% with replicas > 1 leaves at least one pod to update (documented since Kruise v1.2.0).
//   - maxSurge rounds up; maxUnavailable rounds up when maxSurge is 0 and down otherwise; when both
//     resolve to 0, maxUnavailable is 1 so that an update can progress.
func ComputeBounds(spec *v1alpha1.CloneSetSpec) Bounds {
	r := max(0, int(ptr.Deref(spec.Replicas, 1)))
	us := spec.UpdateStrategy
	b := Bounds{Replicas: r, ScaleMaxUnavailable: -1}
	b.Partition = updateorder.Partition(us.Partition, r)
	b.MaxSurge = max(0, scaled(us.MaxSurge, intstr.FromInt32(0), r, true))
	b.MaxUnavailable = max(0, scaled(us.MaxUnavailable, intstr.FromString("20%"), r, b.MaxSurge == 0))
	if b.MaxSurge == 0 && b.MaxUnavailable == 0 {
		b.MaxUnavailable = 1
	}
	if spec.ScaleStrategy.MaxUnavailable != nil {
		b.ScaleMaxUnavailable = max(0, scaled(spec.ScaleStrategy.MaxUnavailable, intstr.FromInt32(0), r, true))
	}
	b.ExpectedUpdated = r - b.Partition
	return b
}

func scaled(v *intstr.IntOrString, def intstr.IntOrString, total int, roundUp bool) int {
	if v == nil {
		v = &def
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, roundUp)
	if err != nil {
		n, _ = intstr.GetScaledValueFromIntOrPercent(&def, total, roundUp)
	}
	return n
}

// computeSurge is the surge allowed now: maxSurge, but no more than the pods still to update by
// recreating them (while not paused) plus the specified pods to replace. A pod that can be updated
// in place needs no surge pod when maxUnavailable lets it be updated: creating one would only lead
// to deleting an old pod that could have been kept (openkruise/kruise#2369). With maxUnavailable 0
// the surge is what lets in-place updates proceed at all, so every pod to update counts.
func (pl *planner) computeSurge() int {
	need := pl.specifiedCount()
	if !pl.snap.Spec.UpdateStrategy.Paused {
		toUpdate := 0
		for _, p := range pl.keep() {
			if pl.isOld(p) && (pl.b.MaxUnavailable == 0 || !pl.inPlace(p)) {
				toUpdate++
			}
		}
		need += min(toUpdate, max(0, pl.oldKeepCount()-pl.b.Partition))
	}
	return min(pl.b.MaxSurge, need)
}

// inPlace reports whether the update type and the revision's in-place decision update p in place.
func (pl *planner) inPlace(p *PodFacts) bool {
	if pl.snap.Spec.UpdateStrategy.Type == v1alpha1.RecreateCloneSetUpdateStrategyType {
		return false
	}
	d, ok := pl.snap.InPlace[p.Revision]
	return ok && d.InPlace()
}

// isOld reports whether the pod is not at the update revision.
func (pl *planner) isOld(p *PodFacts) bool { return p.Revision != pl.snap.UpdateRevision }

// alive are the active pods this plan has not deleted. Callers must not modify the list.
func (pl *planner) alive() []*PodFacts {
	if pl.aliveMemo == nil {
		pl.aliveMemo = make([]*PodFacts, 0, len(pl.active))
		for _, p := range pl.active {
			if !pl.gone[p.Name] {
				pl.aliveMemo = append(pl.aliveMemo, p)
			}
		}
	}
	return pl.aliveMemo
}

// keep are the alive pods the user has not asked to delete and this plan does not hold for
// deletion. Callers must not modify the list.
func (pl *planner) keep() []*PodFacts {
	if pl.keepMemo == nil {
		alive := pl.alive()
		pl.keepMemo = make([]*PodFacts, 0, len(alive))
		for _, p := range alive {
			if !p.SpecifiedDelete && !pl.held[p.Name] {
				pl.keepMemo = append(pl.keepMemo, p)
			}
		}
	}
	return pl.keepMemo
}

// changed drops alive() and keep(): gone or held changed.
func (pl *planner) changed() { pl.aliveMemo, pl.keepMemo = nil, nil }

func (pl *planner) specifiedCount() int { return len(pl.alive()) - len(pl.keep()) }

// oldKeepCount counts kept pods that are not at the update revision and not updated by this plan,
// or that this plan moves back to the current revision in place.
func (pl *planner) oldKeepCount() int {
	n := 0
	for _, p := range pl.keep() {
		if (pl.isOld(p) && !pl.touched[p.Name]) || pl.rolled[p.Name] {
			n++
		}
	}
	return n
}

// scaleOldKeepCount is oldKeepCount as scaling counts it: with Options.PreparingUpdateAsUpdate a
// pod held in PreparingUpdate counts as updated.
func (pl *planner) scaleOldKeepCount() int {
	n := pl.oldKeepCount()
	if !pl.opts.PreparingUpdateAsUpdate {
		return n
	}
	for _, p := range pl.keep() {
		if p.Lifecycle == appspub.LifecycleStatePreparingUpdate && pl.isOld(p) && !pl.touched[p.Name] {
			n--
		}
	}
	return n
}

// budget is how many more available pods the plan may make unavailable:
// available − (replicas − maxUnavailable).
func (pl *planner) budget() int {
	return len(pl.avail) - (pl.b.Replicas - pl.b.MaxUnavailable)
}

// disrupt records that the plan deletes or updates p.
func (pl *planner) disrupt(p *PodFacts, deleted bool) {
	delete(pl.avail, p.Name)
	if deleted {
		pl.gone[p.Name] = true
		pl.changed()
	} else {
		pl.touched[p.Name] = true
	}
}

func (pl *planner) note(format string, args ...any) {
	pl.plan.Notes = append(pl.plan.Notes, fmt.Sprintf(format, args...))
}

func (pl *planner) budgetNote(waiting int, what string) {
	pl.note("%d unavailable ≥ maxUnavailable %d (replicas %d, %d available): %d %s waiting",
		pl.b.Replicas-len(pl.avail), pl.b.MaxUnavailable, pl.b.Replicas, len(pl.avail), waiting, what)
}

// planResumes applies the deferred in-place updates whose grace period is over.
func (pl *planner) planResumes() {
	for _, p := range pl.alive() {
		if !p.GraceDue.IsZero() && !p.GraceDue.After(pl.now) && !pl.touched[p.Name] {
			pl.plan.Resumes = append(pl.plan.Resumes, p.Name)
		}
	}
}

// planDeadline sets NextDeadline to the earliest time a pod passes minReadySeconds or a grace
// period ends.
func (pl *planner) planDeadline() {
	for _, p := range pl.alive() {
		if pl.touched[p.Name] {
			continue
		}
		if p.GraceDue.After(pl.now) {
			pl.deadline(p.GraceDue)
		}
		at, ok := p.AvailableAt(pl.minReady)
		if !ok || !at.After(pl.now) {
			continue
		}
		pl.deadline(at)
	}
}

func (pl *planner) deadline(at time.Time) {
	if pl.plan.NextDeadline.IsZero() || at.Before(pl.plan.NextDeadline) {
		pl.plan.NextDeadline = at
	}
}
