package uniteddeployment

import (
	"math"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// reserveRecord tracks one subset during a reserving allocation.
type reserveRecord struct {
	// room is how many more replicas the subset is expected to run; once negative, -room of its
	// replicas are expected to stay unscheduled (reserved).
	room int32
	// replicas is what the subset is given so far.
	replicas int32
}

// raise gives the subset up to `to` replicas out of rest and returns how many of rest are used
// up: replicas beyond the subset's room are given but not counted, so that as many temporary
// replicas go to later subsets.
func (r *reserveRecord) raise(to, rest int32) int32 {
	add := min(to-r.replicas, rest)
	r.replicas += add
	r.room -= add
	if r.room < 0 {
		return max(0, add+r.room)
	}
	return add
}

// allocateReserving is the Adaptive allocator with reserveUnschedulablePods: minimums first, in
// order; then schedulable subsets up to their maximum and unschedulable ones up to their current
// replicas, in order. An unschedulable (or just recovered, Marked) subset has room only for its
// replicas that are not reserved.
func allocateReserving(spec *appsv1alpha1.UnitedDeploymentSpec, current map[string]SubsetState) (map[string]int32, error) {
	rest := totalOf(spec)
	subsets := spec.Topology.Subsets
	lo, hi, err := bounds(rest, subsets)
	if err != nil {
		return nil, err
	}
	records := make(map[string]*reserveRecord, len(subsets))
	for _, s := range subsets {
		state, exists := current[s.Name]
		if !exists || (!state.Unschedulable && !state.Marked) {
			records[s.Name] = &reserveRecord{room: math.MaxInt32}
		} else {
			records[s.Name] = &reserveRecord{room: state.Replicas - state.ReservedPods}
		}
	}
	export := func() map[string]int32 {
		out := make(map[string]int32, len(records))
		for name, r := range records {
			out[name] = r.replicas
		}
		return out
	}
	for _, s := range subsets {
		if rest -= records[s.Name].raise(lo[s.Name], rest); rest <= 0 {
			return export(), nil
		}
	}
	for _, s := range subsets {
		to := hi[s.Name]
		if state, exists := current[s.Name]; exists && state.Unschedulable {
			to = state.Replicas
		}
		if rest -= records[s.Name].raise(to, rest); rest <= 0 {
			return export(), nil
		}
	}
	return export(), nil
}
