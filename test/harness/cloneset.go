package harness

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/manager"
)

// KruiseClient is a controller-runtime client for cfg that knows Kruise's kinds.
func KruiseClient(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := NewKruiseClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// NewKruiseClient is KruiseClient for programs (bench, soak) and TestMain, which have no test.
func NewKruiseClient(cfg *rest.Config) (client.Client, error) {
	scheme, err := manager.NewScheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// NewCloneSet is a CloneSet of replicas pods labelled app=NAME running pod, with the update type
// and maxUnavailable 2.
func NewCloneSet(ns, name string, replicas int32, typ appsv1alpha1.CloneSetUpdateStrategyType, pod corev1.PodSpec) *appsv1alpha1.CloneSet {
	labels := map[string]string{"app": name}
	return &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1alpha1.CloneSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template:       corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
			UpdateStrategy: appsv1alpha1.CloneSetUpdateStrategy{Type: typ, MaxUnavailable: ptr.To(intstr.FromInt32(2))}}}
}

// WaitCloneSet polls the CloneSet until cond holds, for up to timeout.
func WaitCloneSet(t testing.TB, c client.Client, timeout time.Duration, ns, name, what string, cond func(*appsv1alpha1.CloneSet) bool) *appsv1alpha1.CloneSet {
	t.Helper()
	cs := &appsv1alpha1.CloneSet{}
	Eventually(t, timeout, "CloneSet "+what, func() (bool, string) {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cs); err != nil {
			return false, err.Error()
		}
		return cond(cs), fmt.Sprintf("generation %d status %+v", cs.Generation, cs.Status)
	})
	return cs
}

// RolledOut holds once the CloneSet observed its generation and all replicas run its update
// revision, ready.
func RolledOut(replicas int32) func(*appsv1alpha1.CloneSet) bool {
	return func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ObservedGeneration == cs.Generation && cs.Status.UpdatedReadyReplicas == replicas &&
			cs.Status.ReadyReplicas == replicas && cs.Status.CurrentRevision == cs.Status.UpdateRevision
	}
}

// CheckUpdatedInPlace fails t unless after holds replicas pods, each a pod of before (same name and
// UID) whose first container restarted once onto a new imageID.
func CheckUpdatedInPlace(t testing.TB, before, after map[string]*corev1.Pod, replicas int) {
	t.Helper()
	if len(after) != replicas {
		t.Fatalf("%d pods after the rollout, want %d", len(after), replicas)
	}
	for name, p := range after {
		b, ok := before[name]
		if !ok || b.UID != p.UID {
			t.Errorf("pod %s was recreated; in place was possible", name)
			continue
		}
		st := p.Status.ContainerStatuses[0]
		if st.RestartCount != 1 || st.ImageID == b.Status.ContainerStatuses[0].ImageID {
			t.Errorf("pod %s not restarted in place once: %s", name, DescribePod(p))
		}
	}
}
