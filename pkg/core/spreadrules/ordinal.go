package spreadrules

import (
	"math"
)

// ChooseByOrdinal picks the subset of a StatefulSet pod, as OpenKruise does for StatefulSets
// (no status bookkeeping): walking the schedulable slots in order, each adds its maxReplicas to a
// running threshold (unlimited adds MaxInt32), and the first whose threshold exceeds the pod's
// ordinal wins. As OpenKruise, maxReplicas is read as a plain integer, so a percentage counts 0,
// and an unschedulable slot is skipped whatever the strategy. ordinal is -1 for a name without
// one. slots are in spec order, each marked from the subset status of its name. Empty when no
// slot takes the pod.
func ChooseByOrdinal(slots []Slot, ordinal int) string {
	var threshold int64
	for _, s := range slots {
		if s.Unschedulable {
			continue
		}
		limit := int64(math.MaxInt32)
		if s.MaxReplicas != nil {
			limit = int64(s.MaxReplicas.IntValue())
		}
		threshold += limit
		if int64(ordinal) < threshold {
			return s.Name
		}
	}
	return ""
}
