package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// The ContainerRecreateRequest that restarts containers for changed metadata gives up after ten
// minutes (the update then waits, visibly, for the progress deadline) and is deleted five minutes
// after it ends; the pod owns it.
const (
	recreateDeadlineSeconds = 600
	recreateTTLSeconds      = 300
)

// RecreateName is the name of the request that restarts pod's containers for the update to
// revision: one per pod and update.
func RecreateName(pod *corev1.Pod, revision string) string {
	sum := sha256.Sum256([]byte(string(pod.UID) + "/" + revision))
	return pod.Name + "-env-" + hex.EncodeToString(sum[:5])
}

// ensureRecreate makes sure a ContainerRecreateRequest restarts names in pod (reading the cache
// first: a request already made is not made again).
func (e *engine) ensureRecreate(ctx context.Context, pod *corev1.Pod, names []string) error {
	state, ok := inplace.StateOf(pod)
	if !ok {
		return nil
	}
	crr := &v1alpha1.ContainerRecreateRequest{}
	key := client.ObjectKey{Namespace: pod.Namespace, Name: RecreateName(pod, state.Revision)}
	if err := e.client.Get(ctx, key, crr); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	crr = &v1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}},
		Spec: v1alpha1.ContainerRecreateRequestSpec{PodName: pod.Name,
			Strategy:              &v1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: v1alpha1.ContainerRecreateRequestFailurePolicyIgnore},
			ActiveDeadlineSeconds: ptr.To[int64](recreateDeadlineSeconds), TTLSecondsAfterFinished: ptr.To[int32](recreateTTLSeconds)},
	}
	for _, n := range names {
		crr.Spec.Containers = append(crr.Spec.Containers, v1alpha1.ContainerRecreateRequestContainer{Name: n})
	}
	if err := e.client.Create(ctx, crr); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ask kruise-daemon to restart %v of pod %s for their env: %w", names, pod.Name, err)
	}
	return nil
}
