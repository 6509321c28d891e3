package distributionrules

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// conditionOrder is the order OpenKruise keeps the conditions in.
var conditionOrder = []appsv1alpha1.ResourceDistributionConditionType{
	appsv1alpha1.ResourceDistributionGetResourceFailed,
	appsv1alpha1.ResourceDistributionCreateResourceFailed,
	appsv1alpha1.ResourceDistributionUpdateResourceFailed,
	appsv1alpha1.ResourceDistributionDeleteResourceFailed,
	appsv1alpha1.ResourceDistributionConflictOccurred,
	appsv1alpha1.ResourceDistributionNamespaceNotExists,
}

// succeededReason is the reason of a condition that is False.
const succeededReason = "Succeeded"

// Failure is one namespace a distribution could not serve.
type Failure struct {
	Type      appsv1alpha1.ResourceDistributionConditionType
	Namespace string
	// Reason is the error, in words; the last one of a type becomes the condition's reason.
	Reason string
}

// Status is the distribution's status after a pass: desired targets, those served, the failures
// as conditions (a condition keeps its transition time while its status stays).
func Status(rd *appsv1alpha1.ResourceDistribution, desired, succeeded int32, failures []Failure, now time.Time) appsv1alpha1.ResourceDistributionStatus {
	out := appsv1alpha1.ResourceDistributionStatus{Desired: desired, Succeeded: succeeded, Failed: desired - succeeded,
		ObservedGeneration: rd.Generation}
	for i, t := range conditionOrder {
		c := appsv1alpha1.ResourceDistributionCondition{Type: t, Status: corev1.ConditionFalse, Reason: succeededReason}
		for _, f := range failures {
			if f.Type == t {
				c.Status, c.Reason = corev1.ConditionTrue, f.Reason
				c.FailedNamespaces = append(c.FailedNamespaces, f.Namespace)
			}
		}
		slices.Sort(c.FailedNamespaces)
		c.LastTransitionTime = metav1.NewTime(now)
		if old := rd.Status.Conditions; i < len(old) && old[i].Type == t && old[i].Status == c.Status {
			c.LastTransitionTime = old[i].LastTransitionTime
		}
		out.Conditions = append(out.Conditions, c)
	}
	return out
}
