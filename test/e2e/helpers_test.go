package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/test/harness"
)

// namespace creates a namespace for one test in the shared sandbox and deletes it afterwards.
func namespace(t *testing.T) string { t.Helper(); return harness.Namespace(t, cs) }

func condition(pod *corev1.Pod, typ corev1.PodConditionType) corev1.ConditionStatus {
	return harness.PodCondition(pod, typ)
}

func describe(pod *corev1.Pod) string { return harness.DescribePod(pod) }
