package daemonset

import (
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
)

// The lifecycle hooks (spec.lifecycle, pkg/core/lifecycle) in the plan, as the other workloads': a pod
// to delete (misscheduled, extra, recreate update) or to update in place that its hook holds moves
// to PreparingDelete or PreparingUpdate instead, until the hook releases it; a pod in any state
// but Normal is not available.

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
	for i := range p.s.Nodes {
		n := &p.s.Nodes[i]
		for j := range n.Pods {
			pod := &n.Pods[j]
			if p.acted[pod.Name] || !pod.live() {
				continue
			}
			if !lc.Progress(pod.Name, pod.Lifecycle, pod.InPlaceUpdating, pod.PreNormalReleased, pod.UpdatedReleased) {
				lc.Unneeded(pod.Name, pod.Lifecycle, !n.Verdict.Continue || p.recreating(n, pod), p.updating(n, pod), pod.UpdatedReleased)
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

// lc is the plan's lifecycle part; the pods it holds are acted on.
func (p *planner) lc() lifecycle.Planner {
	return lifecycle.Planner{Hooks: p.s.Spec.Lifecycle, Into: &p.plan.Lifecycle, Acted: p.acted}
}
