package statefulset

import (
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
)

// The lifecycle hooks (spec.lifecycle, pkg/core/lifecycle) in the plan, as CloneSet's:
//   - a pod to delete (scale in, reserved ordinal, recreate update) that the preDelete hook holds
//     moves to PreparingDelete instead and stays until the hook releases it;
//   - a pod to update in place that the inPlaceUpdate hook holds moves to PreparingUpdate
//     instead, and is updated once released; afterwards it is Updated until the hook is satisfied
//     again, then Normal;
//   - a new pod starts PreparingNormal when a preNormal hook is set and becomes Normal once the
//     hook is satisfied.
// A pod in any state but Normal is not available.

// holdForDelete keeps pod in PreparingDelete while the preDelete hook holds it; true when it does.
func (p *planner) holdForDelete(pod *PodFacts, reason string) bool {
	return p.lc().HoldForDelete(pod.Name, pod.Lifecycle, pod.PreDeleteHeld, reason)
}

// holdForUpdate keeps pod in PreparingUpdate while the inPlaceUpdate hook holds it; true when it does.
func (p *planner) holdForUpdate(pod *PodFacts, reason string) bool {
	return p.lc().HoldForUpdate(pod.Name, pod.Lifecycle, pod.PreUpdateHeld, reason)
}

// release moves on the pods this plan does not act on whose hooks let them, and lets a pod held
// for an action that is no longer needed serve again.
func (p *planner) release() {
	lc := p.lc()
	for i := range p.s.Pods {
		pod := &p.s.Pods[i]
		if p.acted[pod.Name] || pod.Terminating || pod.finished() {
			continue
		}
		if !lc.Progress(pod.Name, pod.Lifecycle, pod.InPlaceUpdating, pod.PreNormalReleased, pod.UpdatedReleased) {
			deleting := !p.replicas.Contains(pod.Ordinal) || pod.SpecifiedDelete || p.recreating(pod)
			lc.Unneeded(pod.Name, pod.Lifecycle, deleting, p.rolling(pod), pod.UpdatedReleased)
		}
	}
}

// recreating reports whether a rolling update with podUpdatePolicy ReCreate (or a change that
// cannot be made in place) is to replace pod.
func (p *planner) recreating(pod *PodFacts) bool {
	if !p.rolling(pod) {
		return false
	}
	dec, ok := p.s.InPlace[pod.Revision]
	return !ok || !dec.InPlace() || p.s.Spec.UpdateStrategy.RollingUpdate.PodUpdatePolicy == "ReCreate"
}

// lc is the plan's lifecycle part; the pods it holds are acted on.
func (p *planner) lc() lifecycle.Planner {
	return lifecycle.Planner{Hooks: p.s.Spec.Lifecycle, Into: &p.plan.Lifecycle, Acted: p.acted}
}
