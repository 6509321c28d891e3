package cloneset

import (
	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
)

// The lifecycle hooks (spec.lifecycle, pkg/core/lifecycle) in the plan:
//   - a pod to delete (scale in, specified, recreate update) that the preDelete hook holds moves
//     to PreparingDelete instead and stays until the hook releases it; it counts among the pods
//     (no replacement beyond replicas + surge) but no longer among those kept;
//   - a pod to update in place that the inPlaceUpdate hook holds moves to PreparingUpdate instead,
//     and is updated once released (the update writes Updating); afterwards it is Updated until
//     the hook is satisfied again, then Normal;
//   - a new pod starts PreparingNormal (podcontrol.Owner.PreparingNormal, as OpenKruise creates every
//     CloneSet pod) and becomes Normal once the preNormal hook is satisfied, or, with no such hook,
//     once it is scheduled and Ready;
//   - an in-place update moves the pod to Updating in its spec patch, and to Normal (or Updated) in
//     the status write that ends it, so an update stays at three API writes per pod;
//   - a pod in PreparingDelete is deleted once released, or taken back when replicas need it
//     (planPreparingDelete).
// Only Normal (or no state) pods count as available.

// holdForDelete keeps p in PreparingDelete while the preDelete hook holds it; true when it does.
func (pl *planner) holdForDelete(p *PodFacts, reason string) bool {
	return pl.holding(p, pl.lc().HoldForDelete(p.Name, p.Lifecycle, p.PreDeleteHeld, reason), pl.held)
}

// holdForUpdate keeps p in PreparingUpdate while the inPlaceUpdate hook holds it; true when it does.
func (pl *planner) holdForUpdate(p *PodFacts, reason string) bool {
	return pl.holding(p, pl.lc().HoldForUpdate(p.Name, p.Lifecycle, p.PreUpdateHeld, reason), pl.touched)
}

// holding records a held p in acted and takes it out of the available pods.
func (pl *planner) holding(p *PodFacts, held bool, acted map[string]bool) bool {
	if !held {
		return false
	}
	acted[p.Name] = true
	pl.changed() // acted may be held
	delete(pl.avail, p.Name)
	return true
}

// planLifecycle releases the pods whose hooks are done, for the pods this plan does not act on.
func (pl *planner) planLifecycle() {
	lc := pl.lc()
	for _, p := range pl.alive() {
		if pl.touched[p.Name] || pl.held[p.Name] || lc.Progress(p.Name, p.Lifecycle, p.InPlaceUpdating, p.PreNormalReleased, p.UpdatedReleased) {
			continue
		}
		if !lc.Unneeded(p.Name, p.Lifecycle, true, pl.isOld(p), p.UpdatedReleased) && p.Lifecycle == appspub.LifecycleStatePreparingUpdate &&
			pl.oldKeepCount() <= pl.b.Partition {
			// A raised partition keeps every old pod: the update will not come (OpenKruise
			// leaves such a pod held; Kruise lets it serve again).
			lc.Move(p.Name, appspub.LifecycleStateNormal, "the partition keeps it at its revision")
		}
	}
}

func (pl *planner) move(p *PodFacts, to appspub.LifecycleStateType, reason string) {
	pl.lc().Move(p.Name, to, reason)
}

func (pl *planner) hooks() *appspub.Lifecycle { return lifecycle.Hooks(pl.snap.Spec.Lifecycle) }

// lc is the plan's lifecycle part.
func (pl *planner) lc() lifecycle.Planner {
	return lifecycle.Planner{Hooks: pl.snap.Spec.Lifecycle, Into: &pl.plan.Lifecycle}
}
