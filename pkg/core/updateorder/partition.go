package updateorder

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Partition resolves a partition over replicas pods as OpenKruise v1.9.0 does
// (CalculatePartitionReplicas): a percentage rounds up (fewer pods updated), the result is clamped
// to [0, replicas], and a percentage below 100% with more than one pod leaves at least one pod to
// update. A nil or invalid partition is 0.
func Partition(v *intstr.IntOrString, replicas int) int {
	if v == nil || replicas <= 0 {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, replicas, true)
	if err != nil {
		return 0
	}
	n = min(replicas, max(0, n))
	if pct, ok := percent(v); ok && pct < 100 && replicas > 1 && n >= replicas {
		n = replicas - 1
	}
	return n
}

// percent is the number of a percentage value ("30%" → 30).
func percent(v *intstr.IntOrString) (int, bool) {
	if v == nil || v.Type != intstr.String || !strings.HasSuffix(v.StrVal, "%") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	return n, err == nil
}
