package spreadrules

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/pkg/core/updateorder"
)

// DeletionCostAnnotation is the pod annotation the ReplicaSet and CloneSet controllers read to
// choose which pods to delete first on scale-in (lower first).
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// costStep is OpenKruise's unit of deletion cost.
const costStep = 100

// CostKinds are the workload kinds whose scale-in honours the pod-deletion-cost: the kinds
// DeletionCosts is for.
var CostKinds = map[string]bool{"CloneSet": true, "Deployment": true, "ReplicaSet": true}

// AdmittedCost is the cost DeletionCosts gives a pod of the workload's latest revision within the
// quota of the i-th of n subsets — what a pod of a CloneSet just admitted there is — so that the
// admission writes it and the controller finds nothing to patch.
func AdmittedCost(i, n int) string { return strconv.Itoa(withinQuota(i, n)) }

// withinQuota is the cost of the pods within the quota of the i-th of n subsets.
func withinQuota(i, n int) int { return costStep * (n - i) }

// Pod is what the deletion costs read of a pod.
type Pod struct {
	// Name is the pod's name.
	Name string
	// Active is Kubernetes' IsPodActive: not finished and not being deleted. Inactive pods get no
	// cost and do not count against the quota.
	Active bool
	// Rank orders the over-quota pods: those first in Kubernetes' ActivePods order get the
	// negative cost.
	Rank updateorder.Rank
}

// CostSubset is one subset with its pods of one workload revision.
type CostSubset struct {
	// Name is the subset's name.
	Name string
	// MaxReplicas is the subset's spec.maxReplicas; nil means unlimited.
	MaxReplicas *intstr.IntOrString
	// Pods are the revision's pods admitted into the subset.
	Pods []Pod
}

// CostInput is one revision of a workload spread over its subsets.
type CostInput struct {
	// Subsets are the spec's subsets, in spec order.
	Subsets []CostSubset
	// Unmatched are the revision's pods that belong to no subset; they are deleted first.
	Unmatched []Pod
	// WorkloadReplicas is what percentages of maxReplicas refer to.
	WorkloadReplicas int32
	// OldRevision is true for every revision but the workload's latest: its pods are removed from
	// the first subset first, so a rollout keeps the spread; the latest loses the last subset first.
	OldRevision bool
}

// DeletionCosts gives each active pod of one revision its pod-deletion-cost, as OpenKruise's
// WorkloadSpread controller does for Deployments, ReplicaSets and CloneSets. With n subsets and
// the i-th counted from the front (from the back for an old revision):
//   - pods within the quota (all of them when unlimited) cost 100*(n-i): later subsets go first;
//   - the pods beyond the quota, taken first in Kubernetes' ActivePods order (stable), cost
//     -100*(i+1): they go before any pod within a quota;
//   - pods in no subset cost -100*(n+1).
//
// A subset whose maxReplicas is malformed gets no costs (OpenKruise skips it); the error names
// each such subset, and the costs of the others are still returned.
func DeletionCosts(in CostInput) (map[string]string, error) {
	n := len(in.Subsets)
	costs := map[string]string{}
	var errs []error
	for idx, s := range in.Subsets {
		i := idx
		if in.OldRevision {
			i = n - idx - 1
		}
		quota, err := MaxReplicas(s.MaxReplicas, in.WorkloadReplicas)
		if err != nil {
			errs = append(errs, fmt.Errorf("subset %s: %w", s.Name, err))
			continue
		}
		keep, drop := splitOverQuota(active(s.Pods), quota)
		set(costs, keep, withinQuota(i, n))
		set(costs, drop, -costStep*(i+1))
	}
	set(costs, active(in.Unmatched), -costStep*(n+1))
	return costs, errors.Join(errs...)
}

// splitOverQuota returns the pods kept within quota (all when Unlimited) and those beyond it, the
// latter chosen first in the ActivePods order, ties keeping input order.
func splitOverQuota(pods []Pod, quota int32) (keep, drop []Pod) {
	if quota == Unlimited || len(pods) <= int(quota) {
		return pods, nil
	}
	sorted := slices.Clone(pods)
	slices.SortStableFunc(sorted, func(a, b Pod) int { return updateorder.Active(a.Rank, b.Rank) })
	over := len(pods) - int(quota)
	return sorted[over:], sorted[:over]
}

func active(pods []Pod) []Pod {
	var out []Pod
	for _, p := range pods {
		if p.Active {
			out = append(out, p)
		}
	}
	return out
}

func set(costs map[string]string, pods []Pod, cost int) {
	for _, p := range pods {
		costs[p.Name] = strconv.Itoa(cost)
	}
}
