package daemonset

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// slot is one node's daemon pods as the rolling update sees them: at most one live pod not at
// the node's target revision (old) and one at it (new); a node with more is left to manage.
type slot struct {
	node     *NodeFacts
	old, new *PodFacts
}

// update moves nodes to the update revision under a rolling update (see doc.go: partition and
// selector, maxUnavailable or maxSurge). Paused and OnDelete update nothing.
func (p *planner) update() {
	us := p.s.Spec.UpdateStrategy
	ru := us.RollingUpdate
	if us.Type != v1beta1.DaemonSetRollingUpdateStrategyType || ru == nil {
		return
	}
	slots := p.slots()
	if ptr.Deref(ru.Paused, false) {
		for _, s := range slots {
			if s.old != nil {
				p.note("rollingUpdate.paused: no pod is updated")
				break
			}
		}
		return
	}
	allowed := p.allowed(ru, slots)
	for _, s := range slots {
		if p.target(s.node) != p.s.UpdateRevision {
			allowed[s.node.Name] = true // rolled back: partition and selector do not hold it
		}
	}
	p.rolling = allowed
	if p.surging() {
		p.surge(ru, slots, allowed)
		return
	}
	p.replace(ru, slots, allowed)
}

// slots are the nodes with live daemon pods that this plan leaves alone, by descending name (the
// update order), but for nodes manage still has to reduce to one old and one new pod.
func (p *planner) slots() []slot {
	var out []slot
	for i := len(p.s.Nodes) - 1; i >= 0; i-- {
		n := &p.s.Nodes[i]
		s, ok := slot{node: n}, true
		for j := range n.Pods {
			pod := &n.Pods[j]
			if !pod.live() || p.acted[pod.Name] {
				continue
			}
			at := &s.old
			if pod.Revision == p.target(n) {
				at = &s.new
			}
			if *at != nil {
				ok = false
			}
			*at = pod
		}
		if ok && (s.old != nil || s.new != nil) {
			out = append(out, s)
		}
	}
	return out
}

// allowed are the nodes the rolling update may move to the update revision: by descending name,
// nodes already updated first, then (with rollingUpdate.selector) only nodes whose labels match,
// at most len(slots) − partition of them -- OpenKruise's order.
func (p *planner) allowed(ru *v1beta1.DaemonSetRollingUpdate, slots []slot) map[string]bool {
	var sel labels.Selector
	if ru.Selector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(ru.Selector); err != nil {
			p.note("rollingUpdate.selector is invalid: no pod is updated: %v", err)
			return map[string]bool{}
		}
	}
	var updated, rest []string
	for _, s := range slots {
		switch {
		case p.target(s.node) != p.s.UpdateRevision:
		case s.old == nil:
			updated = append(updated, s.node.Name)
		case sel == nil || sel.Matches(labels.Set(s.node.Labels)):
			rest = append(rest, s.node.Name)
		}
	}
	order := append(updated, rest...)
	quota := max(len(slots)-p.partition(len(slots)), 0)
	out := make(map[string]bool, len(slots))
	if quota < len(order) {
		p.note("partition: %d of %d nodes keep their old pods", len(order)-quota, len(slots))
		order = order[:quota]
	}
	for _, n := range order {
		out[n] = true
	}
	return out
}

// replace is the update without surge: old pods of allowed nodes are updated in place or
// recreated, unavailable ones at once, available ones while fewer than maxUnavailable nodes are
// unavailable.
func (p *planner) replace(ru *v1beta1.DaemonSetRollingUpdate, slots []slot, allowed map[string]bool) {
	budget := max(scaled(ru.MaxUnavailable, p.desired, 1), 1)
	for i := range p.s.Nodes {
		// A node where no new pod is placed but whose pod keeps running (gone NotReady or
		// unreachable, say) counts too, as Kubernetes counts every node with a daemon pod: its
		// pod, unavailable, is one of the update's (the soak, seed 3).
		n := &p.s.Nodes[i]
		if (n.Verdict.Run || (n.Verdict.Continue && len(n.Pods) > 0)) && !p.hasAvailable(n) {
			budget--
		}
	}
	var candidates []slot
	for _, s := range slots {
		if s.old == nil || s.new != nil || !allowed[s.node.Name] {
			continue
		}
		if !p.available(s.old) {
			p.updatePod(s.node, s.old, ru) // unavailable already: no cost
			continue
		}
		candidates = append(candidates, s)
	}
	for i, s := range candidates {
		if budget <= 0 {
			p.note("maxUnavailable %s: %d pods wait for other nodes' pods to become available", ru.MaxUnavailable.String(), len(candidates)-i)
			return
		}
		p.updatePod(s.node, s.old, ru)
		budget--
	}
}

// hasAvailable reports whether one of the node's daemon pods this plan keeps is available (and
// schedules the plan for when one becomes available).
func (p *planner) hasAvailable(n *NodeFacts) bool {
	found := false
	for i := range n.Pods {
		if pod := &n.Pods[i]; pod.live() && !p.acted[pod.Name] && p.available(pod) {
			found = true
		}
	}
	return found
}

// surge is the update with maxSurge: an updated pod is created beside the old one -- at once
// where the old pod is unavailable, else on at most maxSurge nodes at a time -- and the old pod
// is deleted once the updated one is available.
func (p *planner) surge(ru *v1beta1.DaemonSetRollingUpdate, slots []slot, allowed map[string]bool) {
	room := scaled(ru.MaxSurge, p.desired, 0)
	var candidates []*NodeFacts
	for _, s := range slots {
		switch {
		case s.old == nil:
		case s.new == nil:
			if !allowed[s.node.Name] || !s.node.Verdict.Run {
				continue
			}
			if !p.available(s.old) {
				p.surgeOn(s.node, "its old pod is unavailable")
				continue
			}
			candidates = append(candidates, s.node)
		case !p.available(s.new):
			room--
		default:
			p.delete(s.old, s.node.Name, fmt.Sprintf("the updated pod %s is available", s.new.Name), false)
		}
	}
	for i, n := range candidates {
		if room <= 0 {
			p.note("maxSurge %s: %d nodes wait for other nodes' updated pods to become available", ru.MaxSurge.String(), len(candidates)-i)
			return
		}
		p.surgeOn(n, "surge")
		room--
	}
}

func (p *planner) surgeOn(n *NodeFacts, why string) {
	if p.created[n.Name] {
		return
	}
	p.created[n.Name] = true
	p.plan.Creates = append(p.plan.Creates, Creation{Node: n.Name, Revision: p.target(n),
		Reason: fmt.Sprintf("rolling update of node %s (%s): the updated pod starts beside the old one", n.Name, why)})
}

// updatePod plans the move of pod to its node's target revision (or holds it for a hook): in
// place when rollingUpdateType is InPlaceIfPossible and the change allows it, else by recreating
// it.
func (p *planner) updatePod(n *NodeFacts, pod *PodFacts, ru *v1beta1.DaemonSetRollingUpdate) {
	dec, known := p.s.InPlace[pod.Revision]
	to := p.target(n)
	why := fmt.Sprintf("revision %s → %s", pod.Revision, to)
	if to != p.s.UpdateRevision {
		dec, known = p.s.RollBack, true
		why += fmt.Sprintf(" (node %s is not selected by rollingUpdate.selector any more)", n.Name)
	}
	if ru.Type == v1beta1.DaemonSetInplaceRollingUpdateType && known && dec.InPlace() {
		if !p.holdForUpdate(pod, "update in place, "+why) {
			p.acted[pod.Name] = true
			p.plan.Updates = append(p.plan.Updates, Update{Pod: pod.Name, Mode: UpdateInPlace, Spec: dec.Spec, Reason: why})
		}
		return
	}
	if ru.Type == v1beta1.DaemonSetInplaceRollingUpdateType && len(dec.RecreateReasons) > 0 {
		why += ": " + dec.RecreateReasons[0]
	}
	if !p.holdForDelete(pod, "recreate, "+why) {
		p.acted[pod.Name] = true
		p.plan.Updates = append(p.plan.Updates, Update{Pod: pod.Name, Mode: UpdateRecreate, Reason: why})
	}
}

// target is the revision the node's daemon pod should run: the update revision, or the current
// one for a node rollingUpdate.selector does not select while some nodes run the current
// revision (kruise#1871: a node taken out of a canary goes back), unless the node runs a pod of
// a third revision (left alone, as any unselected node).
func (p *planner) target(n *NodeFacts) string {
	ru := p.s.Spec.UpdateStrategy.RollingUpdate
	if p.s.CurrentRevision == "" || p.s.Spec.UpdateStrategy.Type != v1beta1.DaemonSetRollingUpdateStrategyType || ru == nil || ru.Selector == nil {
		return p.s.UpdateRevision
	}
	if sel, err := metav1.LabelSelectorAsSelector(ru.Selector); err != nil || sel.Matches(labels.Set(n.Labels)) {
		return p.s.UpdateRevision
	}
	for _, pod := range n.Pods {
		if pod.live() && pod.Revision != p.s.UpdateRevision && pod.Revision != p.s.CurrentRevision {
			return p.s.UpdateRevision
		}
	}
	return p.s.CurrentRevision
}
