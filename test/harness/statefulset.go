package harness

import (
	"context"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// WaitStatefulSet polls the Advanced StatefulSet until cond holds, for up to timeout.
func WaitStatefulSet(t testing.TB, c client.Client, timeout time.Duration, ns, name, what string,
	cond func(*appsv1beta1.StatefulSet) bool) *appsv1beta1.StatefulSet {
	t.Helper()
	set := &appsv1beta1.StatefulSet{}
	Eventually(t, timeout, "StatefulSet "+name+" "+what, func() (bool, string) {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, set); err != nil {
			return false, err.Error()
		}
		return cond(set), fmt.Sprintf("generation %d status %+v", set.Generation, set.Status)
	})
	return set
}

// StatefulSetRolledOut holds once the set observed its generation and replicas pods run its
// update revision, ready, the rollout recorded as done.
func StatefulSetRolledOut(replicas int32) func(*appsv1beta1.StatefulSet) bool {
	return func(s *appsv1beta1.StatefulSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.Replicas == replicas &&
			s.Status.ReadyReplicas == replicas && s.Status.UpdatedReadyReplicas == replicas &&
			s.Status.CurrentRevision == s.Status.UpdateRevision
	}
}
