package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/test/harness"
)

// namespace creates a namespace for one test in the shared sandbox and deletes it afterwards.
func namespace(t *testing.T) string { t.Helper(); return harness.Namespace(t, cs) }

func condition(pod *corev1.Pod, typ corev1.PodConditionType) corev1.ConditionStatus {
	return harness.PodCondition(pod, typ)
}

func describe(pod *corev1.Pod) string { return harness.DescribePod(pod) }

// waitObject waits until obj, read again by its namespace and name, satisfies cond, and returns it;
// describe says what it looks like when the wait times out.
func waitObject[T client.Object](t *testing.T, c client.Client, obj T, what string, timeout time.Duration, cond func(T) bool, describe func(T) string) T {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	harness.Eventually(t, timeout, what, func() (bool, string) {
		if err := c.Get(context.Background(), key, obj); err != nil {
			return false, err.Error()
		}
		return cond(obj), describe(obj)
	})
	return obj
}
