package daemonset

import (
	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
)

// The lifecycle hooks (spec.lifecycle, pkg/core/lifecycle) in the plan, as the other workloads': a pod
// to delete (misscheduled, extra, recreate update) or to update in place that its hook holds moves
// to PreparingDelete or PreparingUpdate instead, until the hook releases it; a pod in any state
// but Normal is not available.

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
	for i := range p.s.Nodes {
		n := &p.s.Nodes[i]
		for j := range n.Pods {
			pod := &n.Pods[j]
			if p.acted[pod.Name] || !pod.live() {
				continue
			}
			if to, reason, ok := lifecycle.Progress(pod.Lifecycle, pod.InPlaceUpdating, pod.PreNormalReleased, pod.UpdatedReleased); ok {
				p.move(pod, to, reason)
				continue
			}
			switch {
			case pod.Lifecycle == appspub.LifecycleStatePreparingDelete && n.Verdict.Continue && !p.recreating(n, pod):
				p.move(pod, appspub.LifecycleStateNormal, "no deletion needed any more")
			case pod.Lifecycle == appspub.LifecycleStatePreparingUpdate && !p.updating(n, pod):
				p.move(pod, lifecycle.AfterUpdate(pod.UpdatedReleased), "no update needed any more")
			}
		}
	}
}

// updating reports whether the rolling update is to move pod on node n.
func (p *planner) updating(n *NodeFacts, pod *PodFacts) bool {
	return p.rolling[n.Name] && pod.Revision != p.target(n)
}

// recreating reports whether the rolling update is to replace pod (a Standard update, a surge,
// or a change that cannot be made in place).
func (p *planner) recreating(n *NodeFacts, pod *PodFacts) bool {
	if !p.updating(n, pod) {
		return false
	}
	dec, ok := p.s.InPlace[pod.Revision]
	if p.target(n) != p.s.UpdateRevision {
		dec, ok = p.s.RollBack, true
	}
	return !ok || !dec.InPlace() || p.surging() || p.s.Spec.UpdateStrategy.RollingUpdate.Type != v1beta1.DaemonSetInplaceRollingUpdateType
}

func (p *planner) move(pod *PodFacts, to appspub.LifecycleStateType, reason string) {
	p.plan.Lifecycle = append(p.plan.Lifecycle, LifecycleMove{Pod: pod.Name, To: to, Reason: reason})
}

func (p *planner) hooks() *appspub.Lifecycle { return lifecycle.Hooks(p.s.Spec.Lifecycle) }
