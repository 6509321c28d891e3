package sidecarset

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/core/updateorder"
)

// Plan is what one reconcile of a SidecarSet does.
type Plan struct {
	// Status is the SidecarSet's status.
	Status v1beta1.SidecarSetStatus
	// Flip are the pods whose hot upgrade is done (sidecarrules.FlipDue): the old copies of their
	// hot-upgrade sidecars go to the empty image now, before any upgrade, whatever the update
	// strategy says (as OpenKruise flips them ahead of its NotUpdate, done and paused checks).
	Flip []*corev1.Pod
	// Upgrade are the pods whose sidecars are upgraded in place now, in order (a pod also in Flip
	// is upgraded once flipped).
	Upgrade []*corev1.Pod
	// NotUpgradable are the pods left behind because more than images changed.
	NotUpgradable []*corev1.Pod
	// Why says why no pod is upgraded ("" when some are, or when every pod is up to date).
	Why string
}

// Compute plans one reconcile of set over pods, the alive pods that carry its sidecars
// (sidecarrules.Injected), at latest, its latest revision, with collision count cc.
func Compute(set *v1beta1.SidecarSet, pods []*corev1.Pod, latest string, cc int32) Plan {
	p := Plan{Status: v1beta1.SidecarSetStatus{ObservedGeneration: set.Generation, LatestRevision: latest,
		CollisionCount: ptr.To(cc), MatchedPods: int32(len(pods))}}
	updated := map[*corev1.Pod]bool{}
	ready := map[*corev1.Pod]bool{}
	for _, pod := range pods {
		updated[pod], ready[pod] = sidecarrules.Updated(pod, set), sidecarrules.Ready(pod, set)
		if updated[pod] {
			p.Status.UpdatedPods++
		}
		if ready[pod] {
			p.Status.ReadyPods++
			if updated[pod] {
				p.Status.UpdatedReadyPods++
			}
		}
	}
	for _, pod := range pods {
		if sidecarrules.FlipDue(pod, set) {
			p.Flip = append(p.Flip, pod)
		}
	}
	us := &set.Spec.UpdateStrategy
	switch {
	case p.Status.UpdatedPods >= p.Status.MatchedPods:
		return p
	case us.Type == v1beta1.SidecarSetNotUpdateStrategy:
		p.Why = "updateStrategy.type is NotUpdate"
		return p
	case us.Paused:
		p.Why = "updateStrategy.paused is true"
		return p
	}
	waiting, err := waitingPods(set, pods, updated, &p)
	if err != nil {
		p.Why = "updateStrategy.selector is invalid: " + err.Error()
		return p
	}
	order(set, pods, waiting)
	total := len(pods)
	partition := updateorder.Partition(us.Partition, total)
	if len(waiting) <= partition {
		if len(waiting) > 0 {
			p.Why = "the pods left are kept by updateStrategy.partition"
		}
		return p
	}
	p.Upgrade = withinMaxUnavailable(set, pods, waiting[:len(waiting)-partition], updated, ready)
	if len(p.Upgrade) == 0 {
		p.Why = "updateStrategy.maxUnavailable pods are being upgraded"
	}
	return p
}

// waitingPods are the pods of updateStrategy.selector that wait for the SidecarSet's revision (not
// updated, not being upgraded); those whose change is more than images go to p.NotUpgradable.
func waitingPods(set *v1beta1.SidecarSet, pods []*corev1.Pod, updated map[*corev1.Pod]bool, p *Plan) ([]*corev1.Pod, error) {
	selected := func(*corev1.Pod) bool { return true }
	if sel := set.Spec.UpdateStrategy.Selector; sel != nil {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return nil, err
		}
		selected = func(pod *corev1.Pod) bool { return s.Matches(labels.Set(pod.Labels)) }
	}
	var waiting []*corev1.Pod
	for _, pod := range pods {
		if updated[pod] || !selected(pod) {
			continue
		}
		switch {
		case !sidecarrules.ImagesOnly(pod, set):
			p.NotUpgradable = append(p.NotUpgradable, pod)
		case !sidecarrules.InFlight(pod, set):
			waiting = append(waiting, pod)
		}
	}
	return waiting, nil
}

// withinMaxUnavailable is the head of waiting that updateStrategy.maxUnavailable lets go now: a pod
// whose sidecars run counts as one more unavailable, beside the updated pods not ready yet.
func withinMaxUnavailable(set *v1beta1.SidecarSet, pods, waiting []*corev1.Pod, updated, ready map[*corev1.Pod]bool) []*corev1.Pod {
	// maxUnavailable rounds up, as in OpenKruise since v1.8.0.
	maxUnavailable, _ := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(set.Spec.UpdateStrategy.MaxUnavailable, intstr.FromInt32(1)), len(pods), true)
	unavailable := 0
	for _, pod := range pods {
		if updated[pod] && !ready[pod] {
			unavailable++
		}
	}
	var upgrade []*corev1.Pod
	for _, pod := range waiting {
		if sidecarrules.Running(pod, set) {
			if unavailable >= maxUnavailable {
				break
			}
			unavailable++
		}
		upgrade = append(upgrade, pod)
	}
	return upgrade
}

// order sorts waiting, first to upgrade first, as OpenKruise orders them: Kubernetes' ActivePods
// order (then by namespace and name, which OpenKruise's unstable sort leaves open), then
// priorityStrategy, then scatterStrategy over all the SidecarSet's pods (a term whose value is "*"
// stands for each value the pods carry).
func order(set *v1beta1.SidecarSet, pods, waiting []*corev1.Pod) {
	us := &set.Spec.UpdateStrategy
	slices.SortFunc(waiting, func(a, b *corev1.Pod) int {
		return cmp.Or(updateorder.Active(updateorder.RankOf(a), updateorder.RankOf(b)),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	if priority := updateorder.Priority(us.PriorityStrategy); priority != nil {
		slices.SortStableFunc(waiting, func(a, b *corev1.Pod) int { return priority(a.Labels, b.Labels) })
	}
	if len(us.ScatterStrategy) == 0 {
		return
	}
	var terms []updateorder.Term
	add := func(t updateorder.Term) {
		if !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	population := make([]map[string]string, 0, len(pods))
	for _, pod := range pods {
		population = append(population, pod.Labels)
	}
	for _, t := range us.ScatterStrategy {
		if t.Value != "*" {
			add(updateorder.Term{Key: t.Key, Value: t.Value})
			continue
		}
		for _, pod := range pods {
			if v, ok := pod.Labels[t.Key]; ok {
				add(updateorder.Term{Key: t.Key, Value: v})
			}
		}
	}
	copy(waiting, updateorder.Scatter(waiting, population, terms, func(p *corev1.Pod) map[string]string { return p.Labels }))
}
