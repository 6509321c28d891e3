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
	return pl.hold(p, p.PreDeleteHeld, appspub.LifecycleStatePreparingDelete, pl.hooks().PreDelete, "preDelete", reason, pl.held)
}

// holdForUpdate keeps p in PreparingUpdate while the inPlaceUpdate hook holds it; true when it does.
func (pl *planner) holdForUpdate(p *PodFacts, reason string) bool {
	return pl.hold(p, p.PreUpdateHeld, appspub.LifecycleStatePreparingUpdate, pl.hooks().InPlaceUpdate, "inPlaceUpdate", reason, pl.touched)
}

// hold moves p to state (once) while hook holds it, records it in acted and takes it out of the
// available pods; false when the hook does not hold it.
func (pl *planner) hold(p *PodFacts, held bool, state appspub.LifecycleStateType, hook *appspub.LifecycleHook, name, reason string,
	acted map[string]bool) bool {
	if !held {
		return false
	}
	if m := lifecycle.Hold(p.Name, p.Lifecycle, state, hook, name, reason); m != nil {
		pl.plan.Lifecycle = append(pl.plan.Lifecycle, *m)
	}
	acted[p.Name] = true
	pl.changed() // acted may be held
	delete(pl.avail, p.Name)
	return true
}

// planLifecycle releases the pods whose hooks are done, for the pods this plan does not act on.
func (pl *planner) planLifecycle() {
	for _, p := range pl.alive() {
		if pl.touched[p.Name] || pl.held[p.Name] {
			continue
		}
		if to, reason, ok := lifecycle.Progress(p.Lifecycle, p.InPlaceUpdating, p.PreNormalReleased, p.UpdatedReleased); ok {
			pl.move(p, to, reason)
			continue
		}
		switch p.Lifecycle {
		case appspub.LifecycleStatePreparingUpdate:
			switch {
			case !pl.isOld(p): // the template went back to the pod's revision: nothing to update
				pl.move(p, lifecycle.AfterUpdate(p.UpdatedReleased), "no update needed any more")
			case pl.oldKeepCount() <= pl.b.Partition:
				// A raised partition keeps every old pod: the update will not come (OpenKruise
				// leaves such a pod held; Kruise lets it serve again).
				pl.move(p, appspub.LifecycleStateNormal, "the partition keeps it at its revision")
			}
		}
	}
}

func (pl *planner) move(p *PodFacts, to appspub.LifecycleStateType, reason string) {
	pl.plan.Lifecycle = append(pl.plan.Lifecycle, LifecycleMove{Pod: p.Name, To: to, Reason: reason})
}

func (pl *planner) hooks() *appspub.Lifecycle { return lifecycle.Hooks(pl.snap.Spec.Lifecycle) }
