package cloneset

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/updateorder"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// planPreparingDelete decides the pods already in PreparingDelete (not specified for deletion),
// as OpenKruise's managePreparingDelete does: unless the preDelete hook marks pods NotReady (then
// a deletion, once begun, stands), as many as replicas lack have their deletion cancelled (back to
// PreparingNormal), by name — but not a pod the rollout recreates (recreatedByUpdate); every other
// one is deleted once its hook lets it go, before any other pod is chosen.
func (pl *planner) planPreparingDelete() {
	var preparing []*PodFacts
	planned := 0
	for _, p := range pl.active {
		if p.SpecifiedDelete || p.Lifecycle == appspub.LifecycleStatePreparingDelete {
			planned++
		}
		if p.Lifecycle == appspub.LifecycleStatePreparingDelete && !p.SpecifiedDelete {
			preparing = append(preparing, p)
		}
	}
	cancel := 0
	if h := pl.hooks().PreDelete; h == nil || !h.MarkPodNotReady {
		cancel = pl.b.Replicas - (len(pl.active) - planned)
	}
	slices.SortFunc(preparing, func(a, b *PodFacts) int { return cmp.Compare(a.Name, b.Name) })
	for _, p := range preparing {
		if cancel > 0 && !pl.recreatedByUpdate(p) {
			cancel--
			pl.cancelled[p.Name] = true
			pl.move(p, appspub.LifecycleStatePreparingNormal, "deletion cancelled: replicas need the pod")
			continue
		}
		pl.committed[p.Name] = true
		pl.deletePod(p, DeletePrepared, "in PreparingDelete: deleted once its preDelete hook lets it go")
	}
}

// preparingDeleteKept counts the pods in PreparingDelete whose deletion stands and that are still
// there (held by their hook), and how many of them are at an old revision.
func (pl *planner) preparingDeleteKept() (all, old int) {
	for _, p := range pl.active {
		if pl.committed[p.Name] && !pl.gone[p.Name] {
			all++
			if pl.isOld(p) {
				old++
			}
		}
	}
	return all, old
}

// excludePreparingDelete reports whether pods held in PreparingDelete do not count when scaling out.
func (pl *planner) excludePreparingDelete() bool {
	return pl.opts.ScalingExcludePreparingDelete || pl.snap.ExcludePreparingDelete
}

// planScaleIn deletes the pods beyond replicas plus the surge allowed now. Specified pods go first,
// then pods in deletion order, taken only from a revision group above its target (old pods above
// the partition, updated pods above replicas − partition), so scaling in never breaks the partition.
// Scale-in never leaves fewer than replicas pods.
func (pl *planner) planScaleIn() {
	// The pods in PreparingDelete whose deletion stands are gone already, or held to go.
	excess := len(pl.active) - len(pl.committed) - (pl.b.Replicas + pl.surge)
	if excess <= 0 {
		return
	}
	alive := slices.Clone(pl.alive())
	pl.sortForDeletion(alive)
	for _, p := range alive {
		if excess == 0 {
			return
		}
		if p.SpecifiedDelete && !pl.committed[p.Name] {
			pl.deletePod(p, DeleteScaleIn, "scale in: specified for deletion")
			excess--
		}
	}
	oldExcess := pl.scaleOldKeepCount() - pl.b.Partition
	newExcess := len(pl.keep()) - pl.scaleOldKeepCount() - pl.b.ExpectedUpdated
	for _, p := range alive {
		if excess == 0 {
			return
		}
		if pl.gone[p.Name] || pl.held[p.Name] || pl.cancelled[p.Name] {
			continue
		}
		old := pl.isOld(p)
		switch {
		case old && oldExcess > 0:
			oldExcess--
		case !old && newExcess > 0:
			newExcess--
		default:
			continue
		}
		pl.deletePod(p, DeleteScaleIn, fmt.Sprintf("scale in: %d pods > replicas %d + surge %d",
			len(pl.active), pl.b.Replicas, pl.surge))
		excess--
	}
}

// planSpecifiedDeletes deletes the remaining specified pods, to be replaced: an unavailable one at
// once, an available one only within the maxUnavailable budget.
func (pl *planner) planSpecifiedDeletes() {
	waiting := 0
	for _, p := range pl.alive() {
		if !p.SpecifiedDelete || pl.held[p.Name] {
			continue
		}
		switch {
		case !pl.avail[p.Name]:
			pl.deletePod(p, DeleteSpecified, "specified for deletion (unavailable): replaced")
		case pl.budget() > 0:
			pl.deletePod(p, DeleteSpecified, "specified for deletion: replaced")
		default:
			waiting++
		}
	}
	if waiting > 0 {
		pl.budgetNote(waiting, "specified deletions")
	}
}

// deletePod deletes p, or holds it in PreparingDelete while the preDelete hook holds it.
func (pl *planner) deletePod(p *PodFacts, kind DeleteKind, reason string) {
	if pl.holdForDelete(p, reason) {
		return
	}
	pl.disrupt(p, true)
	pl.plan.Deletes = append(pl.plan.Deletes, Deletion{Pod: p.Name, Kind: kind, Reason: reason})
}

// planCreates creates pods until replicas pods are kept (replacing deleted and specified pods),
// plus surge pods of the update revision while pods still need updating, never exceeding
// replicas + surge pods. New pods get the current revision only as far as needed to keep partition
// old pods; the others get the update revision. scaleStrategy.maxUnavailable bounds creations
// while pods are unavailable, and podcontrol.MaxCreatesPerReconcile those of one plan (a plan then
// takes memory for the pods that exist, never for spec.replicas).
func (pl *planner) planCreates() {
	keep := len(pl.keep())
	want := max(0, pl.b.Replicas-keep)
	needUpdate := 0
	if !pl.snap.Spec.UpdateStrategy.Paused {
		needUpdate = max(0, pl.oldKeepCount()-pl.b.Partition)
	}
	want += min(pl.surge, needUpdate)
	// Pods held in PreparingDelete count among the pods, and among the old ones for the partition,
	// as in OpenKruise, unless scaling excludes them.
	counted, heldOld := len(pl.alive()), 0
	if held, old := pl.preparingDeleteKept(); pl.excludePreparingDelete() {
		counted -= held
	} else {
		heldOld = old
	}
	room := pl.b.Replicas + pl.surge - counted
	n := min(want, room)
	if n < want {
		pl.note("%d pods would be created but %d pods exist and replicas %d + surge %d allow %d more",
			want, counted, pl.b.Replicas, pl.surge, max(0, room))
	}
	if lim := pl.b.ScaleMaxUnavailable; lim >= 0 && n > 0 {
		unavailable := len(pl.alive()) - len(pl.avail)
		if allowed := max(0, lim-unavailable); allowed < n {
			pl.note("%d unavailable pods, scaleStrategy.maxUnavailable %d: %d of %d creations waiting",
				unavailable, lim, n-allowed, n)
			pl.plan.ScaleUpLimit = &allowed
			n = allowed
		}
	}
	if free := len(pl.freeInstanceIDs()); n > free && len(pl.snap.TerminatingInstanceIDs) > 0 && !pl.snap.Spec.ScaleStrategy.DisablePVCReuse {
		wait := min(n-free, len(pl.snap.TerminatingInstanceIDs))
		pl.note("%d creations wait for terminating pods %v to go, to reuse their PVCs", wait, pl.snap.TerminatingInstanceIDs[:wait])
		n -= wait
	}
	if n > podcontrol.MaxCreatesPerReconcile {
		pl.note("at most %d pods are created per reconcile: %d more wait", podcontrol.MaxCreatesPerReconcile, n-podcontrol.MaxCreatesPerReconcile)
		n = podcontrol.MaxCreatesPerReconcile
	}
	if n <= 0 {
		return
	}
	oldNeeded := 0
	if pl.snap.CurrentRevision != "" && pl.snap.CurrentRevision != pl.snap.UpdateRevision {
		oldNeeded = max(0, pl.b.Partition-pl.scaleOldKeepCount()-heldOld)
	}
	free := pl.freeInstanceIDs()
	for i := 0; i < n; i++ {
		c := Creation{Revision: pl.snap.UpdateRevision, Reason: fmt.Sprintf("%d pods kept < replicas %d", keep+i, pl.b.Replicas)}
		switch {
		case i < oldNeeded:
			c.Revision, c.Reason = pl.snap.CurrentRevision, fmt.Sprintf("keep partition %d pods at the current revision", pl.b.Partition)
		case keep+i >= pl.b.Replicas:
			c.Reason = fmt.Sprintf("surge %d while %d pods need updating", pl.surge, needUpdate)
		}
		if len(free) > 0 {
			c.InstanceID, free = free[0], free[1:]
			c.Reason += "; reuses the PVCs of instance " + c.InstanceID
		}
		pl.plan.Creates = append(pl.plan.Creates, c)
	}
}

// sortForDeletion orders pods, first to delete first, choosing the pods OpenKruise v1.9.0 chooses
// when replicas go down (choosePodsToDelete in pkg/controller/cloneset/sync/cloneset_scale.go,
// its ranking in pkg/controller/cloneset/utils/pod_sorter.go; the "Deletion Sequence" of the
// CloneSet user manual):
//
//  1. pods already in PreparingDelete: OpenKruise deletes them all before choosing any other pod;
//  2. among the other pods, those not at the update revision before updated ones: OpenKruise
//     takes the old pods to remove first and then chooses within each group;
//  3. cmpDeletion, with the spread ranks of spreadRanks;
//  4. then by name, for determinism where OpenKruise's unstable sort leaves the order open.
//
// Specified pods are taken first by planScaleIn itself.
func (pl *planner) sortForDeletion(pods []*PodFacts) {
	rank := pl.spreadRanks(pods)
	avail := func(p *PodFacts) bool { return p.Phase == corev1.PodRunning && pl.avail[p.Name] }
	preparing := func(p *PodFacts) bool { return p.Lifecycle == appspub.LifecycleStatePreparingDelete }
	oldFirst := func(p *PodFacts) bool { return !preparing(p) && pl.isOld(p) }
	slices.SortFunc(pods, func(a, b *PodFacts) int {
		return cmp.Or(updateorder.TrueFirst(preparing(a), preparing(b)), updateorder.TrueFirst(oldFirst(a), oldFirst(b)),
			cmpDeletion(a, b, avail, rank), cmp.Compare(a.Name, b.Name))
	})
}

// spreadRanks ranks pods for spreading a scale-in over nodes, as OpenKruise's same-node ranker
// does: within each revision group (at the update revision or not), the pods sharing a node are
// ordered by cmpDeletion (no availability, no ranks; then by name) and, k of them, get ranks k−1,
// k−2, …, 0 in that order. A pod alone on its node, or unscheduled, has rank 0. Pods OpenKruise
// deletes before it chooses (specified, or in PreparingDelete) are not counted.
func (pl *planner) spreadRanks(pods []*PodFacts) map[string]int {
	type place struct {
		old  bool
		node string
	}
	onNode := map[place][]*PodFacts{}
	for _, p := range pods {
		if p.NodeName != "" && !p.SpecifiedDelete && p.Lifecycle != appspub.LifecycleStatePreparingDelete {
			at := place{pl.isOld(p), p.NodeName}
			onNode[at] = append(onNode[at], p)
		}
	}
	rank := map[string]int{}
	for _, ps := range onNode {
		slices.SortFunc(ps, func(a, b *PodFacts) int { return cmp.Or(cmpDeletion(a, b, nil, nil), cmp.Compare(a.Name, b.Name)) })
		for i, p := range ps {
			rank[p.Name] = len(ps) - 1 - i
		}
	}
	return rank
}

// cmpDeletion is OpenKruise's ranking of pods to delete (ActivePodsWithRanks), negative when a
// goes first:
//
//  1. unscheduled before scheduled;
//  2. Pending (or no phase) < Unknown < Running;
//  3. not available before available (avail; skipped when nil), then not ready before ready;
//  4. lower controller.kubernetes.io/pod-deletion-cost first;
//  5. higher spread rank first (rank; all 0 when nil);
//  6. when both are ready, ready for a shorter time first (an unknown ready time first);
//  7. a higher MaxRestarts first (regular containers only);
//  8. newer first (an unknown creation time first).
func cmpDeletion(a, b *PodFacts, avail func(*PodFacts) bool, rank map[string]int) int {
	c := cmp.Or(updateorder.TrueFirst(a.NodeName == "", b.NodeName == ""), cmp.Compare(updateorder.PhaseRank(a.Phase), updateorder.PhaseRank(b.Phase)))
	if c == 0 && avail != nil {
		c = updateorder.TrueFirst(!avail(a), !avail(b))
	}
	return cmp.Or(c, updateorder.TrueFirst(!a.Ready, !b.Ready), cmp.Compare(a.DeletionCost, b.DeletionCost),
		cmp.Compare(rank[b.Name], rank[a.Name]), updateorder.ReadyTime(a.rank(), b.rank()), cmp.Compare(b.MaxRestarts, a.MaxRestarts),
		updateorder.NewerFirst(a.CreationTime, b.CreationTime))
}

// deletionCost parses a controller.kubernetes.io/pod-deletion-cost value as Kubernetes and
// OpenKruise v1.9.0 do: "0", or a base-10 int32 starting with '-' or a digit 1-9 (so no plus sign
// and no leading zero); anything else, an out-of-range value included, counts as 0.
func deletionCost(v string) int32 {
	if v == "" || (v[0] == '0' && v != "0") || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

// freeInstanceIDs are the instance IDs new pods reuse: none with scaleStrategy.disablePVCReuse,
// whose free PVCs planReleasePVCs deletes instead.
func (pl *planner) freeInstanceIDs() []string {
	if pl.snap.Spec.ScaleStrategy.DisablePVCReuse {
		return nil
	}
	return pl.snap.FreeInstanceIDs
}

// planReleasePVCs deletes the PVCs no pod has, with scaleStrategy.disablePVCReuse.
func (pl *planner) planReleasePVCs() {
	if pl.snap.Spec.ScaleStrategy.DisablePVCReuse {
		pl.plan.ReleaseInstanceIDs = append(pl.plan.ReleaseInstanceIDs, pl.snap.FreeInstanceIDs...)
	}
}
