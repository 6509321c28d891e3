package uniteddeployment

import (
	"fmt"
	"math"
	"sort"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/subset"
)

// SubsetState is what the allocator needs to know of an existing subset workload.
type SubsetState struct {
	// Replicas is the workload's current spec.replicas.
	Replicas int32
	// ReadyReplicas counts the subset's healthy pods that stay where they are: ready, running and
	// not reserved.
	ReadyReplicas int32
	// Unschedulable is true while the subset must not receive new replicas (see subset.Assess;
	// with reserveUnschedulablePods: while it has reserved pods).
	Unschedulable bool
	// Marked is true when the subset's Schedulable condition was False at the last reconcile; with
	// reserveUnschedulablePods, such a subset is not trusted with new replicas yet.
	Marked bool
	// ReservedPods counts the subset's pods kept while they cannot be scheduled.
	ReservedPods int32
}

// Allocate returns the replicas of every subset of spec. current holds the existing subset
// workloads by subset name; a missing subset is new (no replicas, schedulable).
func Allocate(spec *appsv1alpha1.UnitedDeploymentSpec, current map[string]SubsetState) (map[string]int32, error) {
	topo := &spec.Topology
	adaptive := topo.ScheduleStrategy.Type == appsv1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType
	switch {
	case adaptive && topo.ScheduleStrategy.Adaptive != nil && topo.ScheduleStrategy.Adaptive.ReserveUnschedulablePods:
		return allocateReserving(spec, current)
	case adaptive:
		return allocateAdaptive(spec, current)
	case hasBounds(topo.Subsets):
		return allocateElastic(spec)
	default:
		return allocateFixed(spec, current)
	}
}

func hasBounds(subsets []appsv1alpha1.UnitedDeploymentSubset) bool {
	for _, s := range subsets {
		if s.MinReplicas != nil || s.MaxReplicas != nil {
			return true
		}
	}
	return false
}

// allocateFixed gives fixed subsets their value and shares the rest evenly over the others.
func allocateFixed(spec *appsv1alpha1.UnitedDeploymentSpec, current map[string]SubsetState) (map[string]int32, error) {
	total := int32(-1) // unset: every subset must be fixed
	if spec.Replicas != nil {
		total = *spec.Replicas
	}
	subsets := spec.Topology.Subsets
	fixed := map[string]int32{}
	var fixedSum int32
	for _, s := range subsets {
		if s.Replicas == nil {
			continue
		}
		// An unparsable value counts as unset, as in OpenKruise (which only logs it).
		if n, err := subset.ParseReplicas(total, *s.Replicas); err == nil {
			fixed[s.Name] = n
			fixedSum += n
		}
	}
	fixedCount := 0
	for _, s := range subsets {
		if _, ok := fixed[s.Name]; ok {
			fixedCount++
		}
	}
	switch {
	case total == -1 && fixedCount != len(subsets):
		return nil, fmt.Errorf("all subsets must be specified when UnitedDeployment replica is unspecified")
	case total != -1 && fixedSum > total:
		return nil, fmt.Errorf("specified subsets' replica (%d) is greater than UnitedDeployment replica (%d)", fixedSum, total)
	case total != -1 && fixedSum < total && fixedCount == len(subsets):
		return nil, fmt.Errorf("specified subsets' replica (%d) is less than UnitedDeployment replica (%d)", fixedSum, total)
	}

	out := make(map[string]int32, len(subsets))
	var free []string
	for _, s := range subsets {
		if n, ok := fixed[s.Name]; ok {
			out[s.Name] = n
		} else {
			free = append(free, s.Name)
		}
	}
	if len(free) == 0 {
		return out, nil
	}
	// The remainder goes to the subsets holding the most replicas now (ties: greater name), so
	// the fewest pods move.
	sort.Slice(free, func(i, j int) bool {
		a, b := current[free[i]].Replicas, current[free[j]].Replicas
		if a != b {
			return a > b
		}
		return free[i] > free[j]
	})
	rest := int(total - fixedSum)
	average, remainder := rest/len(free), rest%len(free)
	for i, name := range free {
		out[name] = int32(average)
		if i < remainder {
			out[name]++
		}
	}
	return out, nil
}

// bounds resolves every subset's minReplicas (default 0) and maxReplicas (default unlimited).
// As in OpenKruise, an unparsable bound resolves to 0.
func bounds(total int32, subsets []appsv1alpha1.UnitedDeploymentSubset) (lo, hi map[string]int32, err error) {
	lo, hi = make(map[string]int32, len(subsets)), make(map[string]int32, len(subsets))
	for i, s := range subsets {
		minR, maxR := int32(0), int32(math.MaxInt32)
		if s.MinReplicas != nil {
			minR, _ = subset.ParseReplicas(total, *s.MinReplicas)
		}
		if s.MaxReplicas != nil {
			maxR, _ = subset.ParseReplicas(total, *s.MaxReplicas)
		}
		if minR > maxR {
			return nil, nil, fmt.Errorf("subset[%d].maxReplicas(%d) must be more than or equal to minReplicas(%d)", i, maxR, minR)
		}
		lo[s.Name], hi[s.Name] = minR, maxR
	}
	return lo, hi, nil
}

// totalOf is spec.replicas as the elastic and adaptive allocators read it: unset is 0.
func totalOf(spec *appsv1alpha1.UnitedDeploymentSpec) int32 {
	if spec.Replicas == nil {
		return 0
	}
	return *spec.Replicas
}

func allocateElastic(spec *appsv1alpha1.UnitedDeploymentSpec) (map[string]int32, error) {
	total := totalOf(spec)
	lo, hi, err := bounds(total, spec.Topology.Subsets)
	if err != nil {
		return nil, err
	}
	return fillMinThenMax(total, lo, hi, spec.Topology.Subsets), nil
}

// allocateAdaptive caps unschedulable subsets at their ready pods and keeps schedulable subsets
// from losing ready pods, then fills as the elastic allocator does.
func allocateAdaptive(spec *appsv1alpha1.UnitedDeploymentSpec, current map[string]SubsetState) (map[string]int32, error) {
	total := totalOf(spec)
	lo, hi, err := bounds(total, spec.Topology.Subsets)
	if err != nil {
		return nil, err
	}
	for _, s := range spec.Topology.Subsets {
		state, exists := current[s.Name]
		ready := state.ReadyReplicas
		unschedulable := exists && state.Unschedulable
		if unschedulable {
			lo[s.Name] = max(ready, lo[s.Name])
			hi[s.Name] = min(ready, hi[s.Name])
		}
		if !unschedulable && ready > lo[s.Name] {
			lo[s.Name] = min(ready, hi[s.Name])
		}
	}
	return fillMinThenMax(total, lo, hi, spec.Topology.Subsets), nil
}

// fillMinThenMax gives each subset its minimum in order, then tops subsets up to their maximum
// in order, never handing out more than total.
func fillMinThenMax(total int32, lo, hi map[string]int32, subsets []appsv1alpha1.UnitedDeploymentSubset) map[string]int32 {
	out := make(map[string]int32, len(subsets))
	var given int32
	for _, s := range subsets {
		add := max(min(lo[s.Name], total-given), 0)
		out[s.Name] = add
		given += add
	}
	if given >= total {
		return out
	}
	for _, s := range subsets {
		add := max(min(hi[s.Name]-lo[s.Name], total-given), 0)
		out[s.Name] += add
		given += add
	}
	return out
}
