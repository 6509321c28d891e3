package statefulset

import (
	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
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
	return p.hold(pod, pod.PreDeleteHeld, appspub.LifecycleStatePreparingDelete, p.hooks().PreDelete, "preDelete", reason)
}

// holdForUpdate keeps pod in PreparingUpdate while the inPlaceUpdate hook holds it; true when it does.
func (p *planner) holdForUpdate(pod *PodFacts, reason string) bool {
	return p.hold(pod, pod.PreUpdateHeld, appspub.LifecycleStatePreparingUpdate, p.hooks().InPlaceUpdate, "inPlaceUpdate", reason)
}

func (p *planner) hold(pod *PodFacts, held bool, state appspub.LifecycleStateType, hook *appspub.LifecycleHook, name, reason string) bool {
	if !held {
		return false
	}
	if m := lifecycle.Hold(pod.Name, pod.Lifecycle, state, hook, name, reason); m != nil {
		p.plan.Lifecycle = append(p.plan.Lifecycle, *m)
	}
	p.acted[pod.Name] = true
	return true
}

// release moves on the pods this plan does not act on whose hooks let them, and lets a pod held
// for an action that is no longer needed serve again.
func (p *planner) release() {
	for i := range p.s.Pods {
		pod := &p.s.Pods[i]
		if p.acted[pod.Name] || pod.Terminating || pod.finished() {
			continue
		}
		if to, reason, ok := lifecycle.Progress(pod.Lifecycle, pod.InPlaceUpdating, pod.PreNormalReleased, pod.UpdatedReleased); ok {
			p.move(pod, to, reason)
			continue
		}
		replica := p.replicas.Contains(pod.Ordinal)
		switch {
		case pod.Lifecycle == appspub.LifecycleStatePreparingDelete && replica && !pod.SpecifiedDelete && !p.recreating(pod):
			p.move(pod, appspub.LifecycleStateNormal, "no deletion needed any more")
		case pod.Lifecycle == appspub.LifecycleStatePreparingUpdate && !p.rolling(pod):
			p.move(pod, lifecycle.AfterUpdate(pod.UpdatedReleased), "no update needed any more")
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

func (p *planner) move(pod *PodFacts, to appspub.LifecycleStateType, reason string) {
	p.plan.Lifecycle = append(p.plan.Lifecycle, LifecycleMove{Pod: pod.Name, To: to, Reason: reason})
}

func (p *planner) hooks() *appspub.Lifecycle { return lifecycle.Hooks(p.s.Spec.Lifecycle) }
