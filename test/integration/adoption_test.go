package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// refused reports whether the API server refused a patch for its uid: the uid is immutable (422),
// or, where a server checks it as a precondition, a conflict.
func refused(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsConflict(err)
}

// Adoption and release change only the pod that was observed (the pod's UID in the patch,
// docs/openkruise.md "Adoption"): a pod deleted and created again under the same name between the
// observation and the write is left alone, as the API server refuses the patch.
func TestAdoptionOnlyOfThePodObserved(t *testing.T) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	pod := inplacePod(t, cs)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	owner := podcontrol.Owner{GVK: v1alpha1.GroupVersion.WithKind("CloneSet"), Object: &v1alpha1.CloneSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: "web", UID: types.UID("0c1d9a52-cloneset")}}}
	ctl := &podcontrol.Control{Client: c}
	stale := pod.DeepCopy()
	stale.UID = types.UID("a-pod-that-is-gone")
	err = ctl.Adopt(ctx, owner, []*corev1.Pod{stale}, &podcontrol.Batch{})
	if !refused(err) {
		t.Fatalf("adopting a pod by a UID it no longer has: %v, want a refusal", err)
	}
	got, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil || len(got.OwnerReferences) != 0 {
		t.Fatalf("the pod gained owners %v (%v)", got.OwnerReferences, err)
	}
	if err := ctl.Adopt(ctx, owner, []*corev1.Pod{pod}, &podcontrol.Batch{}); err != nil {
		t.Fatal(err)
	}
	got, err = cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil || metav1.GetControllerOf(got) == nil || metav1.GetControllerOf(got).UID != owner.Object.GetUID() {
		t.Fatalf("the observed pod was not adopted: %v (%v)", got.OwnerReferences, err)
	}
	if err := ctl.Release(ctx, owner, []*corev1.Pod{stale}, &podcontrol.Batch{}); !refused(err) {
		t.Fatalf("releasing a pod by a UID it no longer has: %v, want a refusal", err)
	}
	if err := ctl.Release(ctx, owner, []*corev1.Pod{got}, &podcontrol.Batch{}); err != nil {
		t.Fatal(err)
	}
	got, err = cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil || len(got.OwnerReferences) != 0 {
		t.Fatalf("the pod kept owners %v after its release (%v)", got.OwnerReferences, err)
	}
}
