package spreadrules

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Unlimited is the missingReplicas of a subset without maxReplicas.
const Unlimited int32 = -1

// MaxReplicas is how many pods a subset with maxReplicas limit may hold when the workload
// wants workloadReplicas: an integer as is, a percentage rounded up; Unlimited when limit is nil.
// It errors on a malformed value or a negative result, which OpenKruise's controller treats as
// "skip this subset".
func MaxReplicas(limit *intstr.IntOrString, workloadReplicas int32) (int32, error) {
	if limit == nil {
		return Unlimited, nil
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(limit, int(workloadReplicas), true)
	if err != nil {
		return 0, fmt.Errorf("maxReplicas %s: %w", limit.String(), err)
	}
	if v < 0 {
		return 0, fmt.Errorf("maxReplicas %s is negative", limit.String())
	}
	return int32(v), nil
}

// InitialStatuses are the subset statuses the admission webhook starts from when the status has
// none for the pod's revision: one per subset in spec order, missingReplicas at the full quota.
// As OpenKruise, a malformed maxReplicas is not an error here: the subset starts at 0.
func InitialStatuses(subsets []appsv1alpha1.WorkloadSpreadSubset, workloadReplicas int32) []appsv1alpha1.WorkloadSpreadSubsetStatus {
	out := make([]appsv1alpha1.WorkloadSpreadSubsetStatus, 0, len(subsets))
	for _, s := range subsets {
		st := appsv1alpha1.WorkloadSpreadSubsetStatus{Name: s.Name, MissingReplicas: Unlimited}
		if s.MaxReplicas != nil {
			v, _ := intstr.GetScaledValueFromIntOrPercent(s.MaxReplicas, int(workloadReplicas), true)
			st.MissingReplicas = int32(v)
		}
		out = append(out, st)
	}
	return out
}
