package cloneset

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// planScaleIn deletes the pods beyond replicas plus the surge allowed now. Specified pods go first,
// then pods in deletion order, taken only from a revision group above its target (old pods above
// the partition, updated pods above replicas − partition), so scaling in never breaks the partition.
// Scale-in never leaves fewer than replicas pods.
func (pl *planner) planScaleIn() {
	excess := len(pl.active) - (pl.b.Replicas + pl.surge)
	if excess <= 0 {
		return
	}
	alive := pl.alive()
	sortForDeletion(alive)
	for _, p := range alive {
		if excess == 0 {
			return
		}
		if p.SpecifiedDelete {
			pl.deletePod(p, DeleteScaleIn, "scale in: specified for deletion")
			excess--
		}
	}
	oldExcess := pl.oldKeepCount() - pl.b.Partition
	newExcess := len(pl.keep()) - pl.oldKeepCount() - pl.b.ExpectedUpdated
	for _, p := range alive {
		if excess == 0 {
			return
		}
		if pl.gone[p.Name] || pl.held[p.Name] {
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
// while pods are unavailable.
func (pl *planner) planCreates() {
	keep := len(pl.keep())
	want := max(0, pl.b.Replicas-keep)
	needUpdate := 0
	if !pl.snap.Spec.UpdateStrategy.Paused {
		needUpdate = max(0, pl.oldKeepCount()-pl.b.Partition)
	}
	want += min(pl.surge, needUpdate)
	room := pl.b.Replicas + pl.surge - len(pl.alive())
	n := min(want, room)
	if n < want {
		pl.note("%d pods would be created but %d pods exist and replicas %d + surge %d allow %d more",
			want, len(pl.alive()), pl.b.Replicas, pl.surge, max(0, room))
	}
	if lim := pl.b.ScaleMaxUnavailable; lim >= 0 && n > 0 {
		unavailable := len(pl.alive()) - len(pl.avail)
		if allowed := max(0, lim-unavailable); allowed < n {
			pl.note("%d unavailable pods, scaleStrategy.maxUnavailable %d: %d of %d creations waiting",
				unavailable, lim, n-allowed, n)
			n = allowed
		}
	}
	if free := len(pl.freeInstanceIDs()); n > free && len(pl.snap.TerminatingInstanceIDs) > 0 && !pl.snap.Spec.ScaleStrategy.DisablePVCReuse {
		wait := min(n-free, len(pl.snap.TerminatingInstanceIDs))
		pl.note("%d creations wait for terminating pods %v to go, to reuse their PVCs", wait, pl.snap.TerminatingInstanceIDs[:wait])
		n -= wait
	}
	if n <= 0 {
		return
	}
	oldNeeded := 0
	if pl.snap.CurrentRevision != "" && pl.snap.CurrentRevision != pl.snap.UpdateRevision {
		oldNeeded = max(0, pl.b.Partition-pl.oldKeepCount())
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

// sortForDeletion orders pods, first to delete first (the documented CloneSet deletion sequence):
// unscheduled, then Pending < Unknown < Running, not ready, lower pod-deletion-cost, more pods of
// this CloneSet on the same node, ready for a shorter time, more restarts, newer; then by name. Pods
// already in PreparingDelete come first.
func sortForDeletion(pods []*PodFacts) {
	perNode := map[string]int{}
	for _, p := range pods {
		if p.NodeName != "" {
			perNode[p.NodeName]++
		}
	}
	slices.SortStableFunc(pods, func(a, b *PodFacts) int {
		// A pod already held for deletion is the one to delete: choices stay stable while hooks hold.
		if c := cmpBool(a.Lifecycle == appspub.LifecycleStatePreparingDelete, b.Lifecycle == appspub.LifecycleStatePreparingDelete); c != 0 {
			return c
		}
		if c := cmpDisruption(a, b); c != 0 {
			return c
		}
		if c := cmp.Compare(a.DeletionCost, b.DeletionCost); c != 0 {
			return c
		}
		if c := cmp.Compare(perNode[b.NodeName], perNode[a.NodeName]); c != 0 {
			return c
		}
		if c := cmpTimeNewerFirst(a.ReadySince, b.ReadySince); c != 0 {
			return c
		}
		if c := cmp.Compare(b.RestartCount, a.RestartCount); c != 0 {
			return c
		}
		if c := cmpTimeNewerFirst(a.CreationTime, b.CreationTime); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

// cmpDisruption orders pods whose loss hurts least first: unscheduled, Pending < Unknown <
// Running, not ready. Both the deletion and the update order start with it.
func cmpDisruption(a, b *PodFacts) int {
	if c := cmpBool(a.NodeName == "", b.NodeName == ""); c != 0 {
		return c
	}
	if c := cmp.Compare(phaseRank(a.Phase), phaseRank(b.Phase)); c != 0 {
		return c
	}
	return cmpBool(!a.Ready, !b.Ready)
}

// cmpBool orders true first.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	default:
		return 1
	}
}

func phaseRank(p corev1.PodPhase) int {
	switch p {
	case corev1.PodPending:
		return 0
	case corev1.PodUnknown:
		return 1
	case corev1.PodRunning:
		return 2
	default:
		return 3
	}
}

// cmpTimeNewerFirst orders a zero time first, then later times before earlier ones.
func cmpTimeNewerFirst(a, b time.Time) int {
	if c := cmpBool(a.IsZero(), b.IsZero()); c != 0 {
		return c
	}
	return b.Compare(a)
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
