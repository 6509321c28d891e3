package cloneset

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/updateorder"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// planUpdates moves kept old pods above the partition to the update revision, unless paused.
// Unavailable pods go first and cost nothing; an available pod is updated only within the
// maxUnavailable budget. The mode follows the update type and the in-place decision.
func (pl *planner) planUpdates() {
	if pl.snap.Spec.UpdateStrategy.Paused {
		if n := pl.oldKeepCount() - pl.b.Partition; n > 0 {
			pl.note("paused: %d pods above partition %d not updated", n, pl.b.Partition)
		}
		return
	}
	need := pl.oldKeepCount() - pl.b.Partition
	if need <= 0 {
		return
	}
	var candidates []*PodFacts
	for _, p := range pl.keep() {
		// A pod in PreparingDelete is not updated: it is deleted, or taken back first
		// (planPreparingDelete).
		if pl.isOld(p) && p.Lifecycle != appspub.LifecycleStatePreparingDelete {
			candidates = append(candidates, p)
		}
	}
	pl.sortForUpdate(candidates)
	waiting := 0
	for _, p := range candidates {
		if need == 0 {
			break
		}
		if pl.full() {
			pl.deadline(pl.now) // the rest at once, from a fresh snapshot
			break
		}
		if pl.avail[p.Name] && pl.budget() <= 0 {
			waiting++
			continue
		}
		if pl.updatePod(p) {
			need--
		}
	}
	if waiting > 0 && need > 0 {
		pl.budgetNote(min(waiting, need), "updates")
	}
}

// recreatedByUpdate reports whether the rollout recreates p: it is at an old revision, the update
// is not paused, and its update cannot be made in place. A pod in PreparingDelete for such an
// update is deleted once released (OpenKruise marks it specified for deletion), never taken back.
func (pl *planner) recreatedByUpdate(p *PodFacts) bool {
	if !pl.isOld(p) || pl.snap.Spec.UpdateStrategy.Paused {
		return false
	}
	typ := pl.snap.Spec.UpdateStrategy.Type
	d, known := pl.snap.InPlace[p.Revision]
	return typ == v1alpha1.RecreateCloneSetUpdateStrategyType || (typ != v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType && (!known || !d.InPlace()))
}

// updatePod plans the update of p to the update revision; false when the update type refuses it.
func (pl *planner) updatePod(p *PodFacts) bool {
	d, known := pl.snap.InPlace[p.Revision]
	return pl.movePod(p, pl.snap.UpdateRevision, d, known)
}

// movePod plans moving p to revision target with the in-place decision d (known: there is one);
// false when the update type refuses it.
func (pl *planner) movePod(p *PodFacts, target string, d inplace.Decision, known bool) bool {
	typ := pl.snap.Spec.UpdateStrategy.Type
	if typ == "" {
		typ = v1alpha1.DefaultCloneSetUpdateStrategyType
	}
	u := Update{Pod: p.Name, From: p.Revision, To: target, Unpaid: !pl.avail[p.Name]}
	why := "no in-place decision for revision " + p.Revision
	if known && !d.InPlace() {
		why = strings.Join(d.RecreateReasons, "; ")
	}
	switch {
	case typ == v1alpha1.RecreateCloneSetUpdateStrategyType:
		u.Mode, u.Reason = UpdateRecreate, "update type ReCreate"
	case known && d.InPlace():
		u.Mode, u.Spec, u.Reason = UpdateInPlace, d.Spec, fmt.Sprintf("update type %s: only in-place fields changed", typ)
	case typ == v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType:
		pl.plan.Refusals = append(pl.plan.Refusals, Refusal{Pod: p.Name,
			Reason: "update type InPlaceOnly cannot apply the change in place: " + why})
		return false
	default:
		u.Mode, u.Reason = UpdateRecreate, fmt.Sprintf("update type %s cannot update in place: %s", typ, why)
	}
	if target != pl.snap.UpdateRevision {
		u.Reason = fmt.Sprintf("partition %d: back to revision %s, %s", pl.b.Partition, target, u.Reason)
	}
	if u.Mode == UpdateRecreate && pl.holdForDelete(p, u.Reason) {
		return true
	}
	if u.Mode == UpdateInPlace && pl.holdForUpdate(p, u.Reason) {
		return true
	}
	pl.disrupt(p, u.Mode == UpdateRecreate)
	pl.plan.Updates = append(pl.plan.Updates, u)
	return true
}

// planRollback (Options.PartitionRollback) moves the kept pods at the update revision beyond
// replicas − partition back to the current revision, in the update order and within the
// maxUnavailable budget, as updates are. Pods recreated are replaced at the current revision by
// planCreates (they are then missing from the partition).
func (pl *planner) planRollback() {
	cur, upd := pl.snap.CurrentRevision, pl.snap.UpdateRevision
	if !pl.opts.PartitionRollback || pl.snap.Spec.UpdateStrategy.Paused || cur == "" || cur == upd {
		return
	}
	var candidates []*PodFacts
	for _, p := range pl.keep() {
		// A pod held for deletion is not moved back (as in OpenKruise): it is going anyway.
		if !pl.isOld(p) && !pl.touched[p.Name] && p.Lifecycle != appspub.LifecycleStatePreparingDelete {
			candidates = append(candidates, p)
		}
	}
	excess := len(candidates) - pl.b.ExpectedUpdated
	if excess <= 0 {
		return
	}
	var d inplace.Decision
	if pl.snap.Rollback != nil {
		d = *pl.snap.Rollback
	}
	pl.sortForUpdate(candidates)
	waiting := 0
	for _, p := range candidates {
		if excess == 0 {
			break
		}
		if pl.full() {
			pl.deadline(pl.now) // the rest at once, from a fresh snapshot
			break
		}
		if pl.avail[p.Name] && pl.budget() <= 0 {
			waiting++
			continue
		}
		if pl.movePod(p, cur, d, pl.snap.Rollback != nil) {
			excess--
			if !pl.gone[p.Name] {
				pl.rolled[p.Name] = true
			}
		}
	}
	if waiting > 0 && excess > 0 {
		pl.budgetNote(min(waiting, excess), "rollbacks")
	}
}

// full reports whether the plan moves podcontrol.MaxUpdatesPerReconcile pods already.
func (pl *planner) full() bool {
	return len(pl.plan.Updates)+len(pl.plan.Lifecycle) >= podcontrol.MaxUpdatesPerReconcile
}

// sortForUpdate orders pods, first to update first, as OpenKruise v1.9.0 orders the pods waiting
// for an update or a rollback (SortUpdateIndexes in pkg/controller/cloneset/sync/cloneset_update.go):
//
//  1. Kubernetes' ActivePods order (cmpActive), then by name: OpenKruise's sort is unstable, so the
//     name only settles what it leaves open;
//  2. updateStrategy.priorityStrategy (pkg/core/updateorder.Priority), stably;
//  3. updateStrategy.scatterStrategy (pkg/core/updateorder.Scatter), with the density of matching pods
//     among all the alive pods;
//  4. pods in lifecycle state PreparingUpdate first, stably: their update has begun.
func (pl *planner) sortForUpdate(pods []*PodFacts) {
	us := &pl.snap.Spec.UpdateStrategy
	slices.SortFunc(pods, func(a, b *PodFacts) int { return cmp.Or(cmpActive(a, b), cmp.Compare(a.Name, b.Name)) })
	if priority := updateorder.Priority(us.PriorityStrategy); priority != nil {
		slices.SortStableFunc(pods, func(a, b *PodFacts) int { return priority(a.Labels, b.Labels) })
	}
	if len(us.ScatterStrategy) > 0 {
		terms := make([]updateorder.Term, len(us.ScatterStrategy))
		for i, t := range us.ScatterStrategy {
			terms[i] = updateorder.Term{Key: t.Key, Value: t.Value}
		}
		var population []map[string]string
		for _, p := range pl.alive() {
			population = append(population, p.Labels)
		}
		copy(pods, updateorder.Scatter(pods, population, terms, func(p *PodFacts) map[string]string { return p.Labels }))
	}
	preparing := func(p *PodFacts) bool { return p.Lifecycle == appspub.LifecycleStatePreparingUpdate }
	slices.SortStableFunc(pods, func(a, b *PodFacts) int { return updateorder.TrueFirst(preparing(a), preparing(b)) })
}

// cmpActive is Kubernetes' ActivePods order (updateorder.Active), negative when a goes first.
func cmpActive(a, b *PodFacts) int { return updateorder.Active(a.rank(), b.rank()) }

// rank is what the ActivePods order reads of the pod.
func (f *PodFacts) rank() updateorder.Rank {
	return updateorder.Rank{Scheduled: f.NodeName != "", Phase: f.Phase, Ready: f.Ready, ReadySince: f.ReadySince,
		MaxRestarts: f.MaxRestarts, SidecarRestarts: f.SidecarRestarts, Created: f.CreationTime}
}
