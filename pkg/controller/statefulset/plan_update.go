package statefulset

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/updateorder"
)

// update moves replicas to the update revision under a rolling update: ordered, from the highest
// ordinal down to the partition (a position among the replicas, reserved ordinals not counted);
// unordered, by unorderedUpdate.priorityStrategy, keeping partition pods old. At most
// maxUnavailable replicas are unavailable at once. Replicas unavailable already are updated first
// and at no cost, whatever their place in the order: a broken pod of an old revision (say, one
// whose in-place update to a bad image never completes) is fixed by the update rather than
// waited for. Paused and OnDelete update nothing.
func (p *planner) update() {
	us := p.s.Spec.UpdateStrategy
	ru := us.RollingUpdate
	if us.Type == appsv1.OnDeleteStatefulSetStrategyType || ru == nil || p.s.CurrentRevision == "" {
		return
	}
	if ru.Paused {
		if p.hasOld() {
			p.note("rollingUpdate.paused: no pod is updated")
		}
		return
	}
	budget := scaledValue(ru.MaxUnavailable, p.replicas.Len()) - p.missing
	for i := range p.s.Pods {
		if pod := &p.s.Pods[i]; p.replicas.Contains(pod.Ordinal) && (!p.healthy(pod) || pod.ClaimsResizing) {
			budget--
		}
	}
	var healthy []*PodFacts
	for _, pod := range p.candidates(ru) {
		switch {
		case pod.ClaimsResizing:
			p.note("%s waits for its claims to be resized", pod.Name)
		case pod.healthy(p.now, p.minReady):
			healthy = append(healthy, pod)
		default:
			p.roll(pod, ru.PodUpdatePolicy) // unavailable already: no cost
		}
	}
	for _, pod := range healthy {
		if budget <= 0 {
			p.note("maxUnavailable %s: %s waits for another replica to become available", ru.MaxUnavailable.String(), pod.Name)
			return
		}
		if p.roll(pod, ru.PodUpdatePolicy) {
			budget--
		}
	}
}

// roll moves pod on: its claims are expanded first (the pod keeps running), then it is updated.
// It reports whether that costs an unavailable replica.
func (p *planner) roll(pod *PodFacts, policy v1beta1.StatefulSetPodUpdatePolicyType) bool {
	if pod.ClaimsBehind {
		p.acted[pod.Name] = true
		p.plan.Expands = append(p.plan.Expands, pod.Name)
		return true
	}
	return p.updatePod(pod, policy)
}

// hasOld reports whether some replica is not at the update revision.
func (p *planner) hasOld() bool {
	for _, pod := range p.byOrd {
		if p.replicas.Contains(pod.Ordinal) && pod.Revision != p.s.UpdateRevision {
			return true
		}
	}
	return false
}

// candidates are the replicas to update (old, or with claims behind their templates), in update
// order.
func (p *planner) candidates(ru *v1beta1.StatefulSetRollingUpdateStrategy) []*PodFacts {
	partition := int(ptr.Deref(ru.Partition, 0))
	var old []*PodFacts
	for i := range p.s.Pods {
		pod := &p.s.Pods[i]
		pos, replica := p.replicas.Position(pod.Ordinal)
		if !replica || pod.Terminating || pod.finished() || (pod.Revision == p.s.UpdateRevision && !pod.ClaimsBehind && !pod.ClaimsResizing) {
			continue
		}
		if !p.unordered() && pos < partition {
			continue
		}
		old = append(old, pod)
	}
	slices.SortFunc(old, func(a, b *PodFacts) int { return b.Ordinal - a.Ordinal }) // from the highest ordinal down
	if !p.unordered() {
		return old
	}
	if prio := updateorder.Priority(ru.UnorderedUpdate.PriorityStrategy); prio != nil {
		slices.SortStableFunc(old, func(a, b *PodFacts) int { return prio(a.Labels, b.Labels) })
	}
	return old[:max(len(old)-partition, 0)]
}

// updatePod plans pod's update under policy (or holds it for a hook) and reports whether it made
// it unavailable.
func (p *planner) updatePod(pod *PodFacts, policy v1beta1.StatefulSetPodUpdatePolicyType) bool {
	dec, known := p.s.InPlace[pod.Revision]
	why := fmt.Sprintf("revision %s → %s", pod.Revision, p.s.UpdateRevision)
	switch {
	case policy != v1beta1.RecreateStatefulSetPodUpdatePolicy && known && dec.InPlace():
		if !p.holdForUpdate(pod, "update in place, "+why) {
			p.acted[pod.Name] = true
			p.plan.Updates = append(p.plan.Updates, Update{Pod: pod.Name, Mode: UpdateInPlace, Spec: dec.Spec, Reason: why})
		}
	case policy == v1beta1.InPlaceOnlyStatefulSetPodUpdatePolicy:
		reason := "its revision is unknown"
		if len(dec.RecreateReasons) > 0 {
			reason = dec.RecreateReasons[0]
		}
		p.plan.Refusals = append(p.plan.Refusals, Refusal{Pod: pod.Name, Reason: "InPlaceOnly cannot apply the change in place: " + reason})
		return false
	default:
		if policy != v1beta1.RecreateStatefulSetPodUpdatePolicy && len(dec.RecreateReasons) > 0 {
			why += ": " + dec.RecreateReasons[0]
		}
		if !p.holdForDelete(pod, "recreate, "+why) {
			p.acted[pod.Name] = true
			p.plan.Updates = append(p.plan.Updates, Update{Pod: pod.Name, Mode: UpdateRecreate, Reason: why})
		}
	}
	return true
}
