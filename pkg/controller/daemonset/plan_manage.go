package daemonset

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// manage keeps one daemon pod on every node that should run one: it creates the missing pods
// (within burstReplicas and, with partitionedScaling, the partition), deletes the finished, the
// extra and the misscheduled ones, and the pods of nodes that are gone.
func (p *planner) manage() {
	var need []*NodeFacts
	withPods := 0
	for i := range p.s.Nodes {
		n := &p.s.Nodes[i]
		if p.manageNode(n) {
			need = append(need, n)
		} else if n.Verdict.Run && len(n.Pods) > 0 {
			withPods++
		}
	}
	for i := range p.s.Strays {
		p.delete(&p.s.Strays[i], "", "its node does not exist", false)
	}
	if ss := p.s.Spec.ScaleStrategy; ss != nil && ss.PartitionedScaling && len(need) > 0 {
		room := max(p.desired-p.partition(p.desired)-withPods, 0)
		if room < len(need) {
			p.note("scaleStrategy.partitionedScaling: %d of %d nodes wait for their pod (partition %d)", len(need)-room, len(need), p.partition(p.desired))
			need = need[:room]
		}
	}
	burst := scaled(p.s.Spec.BurstReplicas, p.desired, 250)
	burst = max(burst, 1)
	if len(need) > burst {
		p.note("burstReplicas %d: %d nodes wait for their pod", burst, len(need)-burst)
		need = need[:burst]
	}
	for _, n := range need {
		p.created[n.Name] = true
		p.plan.Creates = append(p.plan.Creates, Creation{Node: n.Name, Revision: p.target(n),
			Reason: fmt.Sprintf("node %s should run a daemon pod and has none", n.Name)})
	}
	if extra := len(p.plan.Deletes) - burst; extra > 0 {
		p.note("burstReplicas %d: %d deletions wait", burst, extra)
		for _, d := range p.plan.Deletes[burst:] {
			delete(p.acted, d.Pod)
		}
		p.plan.Deletes = p.plan.Deletes[:burst]
	}
}

// manageNode plans the deletions of one node's pods and reports whether the node needs a new pod.
func (p *planner) manageNode(n *NodeFacts) (needsPod bool) {
	if !n.Verdict.Continue {
		for i := range n.Pods {
			if pod := &n.Pods[i]; !pod.Terminating {
				p.delete(pod, n.Name, "the node may not run it: "+n.Verdict.Reason, false)
			}
		}
		return false
	}
	var live []*PodFacts
	for i := range n.Pods {
		pod := &n.Pods[i]
		switch {
		case pod.Terminating:
		case pod.finished() && pod.Phase == corev1.PodFailed:
			if n.BackoffUntil.After(p.now) {
				p.note("node %s backs off after its pod %s failed", n.Name, pod.Name)
				p.wake(n.BackoffUntil)
				continue
			}
			p.delete(pod, n.Name, "the pod failed: it is replaced", true)
		case pod.finished():
			p.delete(pod, n.Name, "the pod succeeded: it is replaced", false)
		default:
			live = append(live, pod)
			p.available(pod) // the status counts it once it is: wake the plan then
		}
	}
	if len(n.Pods) == 0 {
		return n.Verdict.Run
	}
	for _, pod := range p.extra(live) {
		p.delete(pod, n.Name, fmt.Sprintf("node %s runs more than one daemon pod: the oldest is kept", n.Name), false)
	}
	return false
}

// extra are the node's live pods beyond the one it keeps (the oldest; during a surge update the
// oldest old pod and the oldest updated one). live is oldest first.
func (p *planner) extra(live []*PodFacts) []*PodFacts {
	if len(live) < 2 {
		return nil
	}
	if !p.surging() {
		return live[1:]
	}
	var out []*PodFacts
	keptOld, keptNew := false, false
	for _, pod := range live {
		kept := &keptOld
		if pod.Revision == p.s.UpdateRevision {
			kept = &keptNew
		}
		if *kept {
			out = append(out, pod)
		}
		*kept = true
	}
	return out
}
