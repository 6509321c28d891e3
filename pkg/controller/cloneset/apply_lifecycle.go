package cloneset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/controller/podreadiness"
	"github.com/kruise-ng/kruise/pkg/holders"
	"github.com/kruise-ng/kruise/pkg/inplace"
	"github.com/kruise-ng/kruise/pkg/inplace/engine"
	"github.com/kruise-ng/kruise/pkg/lifecycle"
)

// moveLifecycle puts pod in the move's lifecycle state, then holds it NotReady (KruisePodReady
// False) when the hook asks for it. The state goes first: the pod readiness controller keeps the
// condition False only for a pod in a hook's state.
func (r *Reconciler) moveLifecycle(ctx context.Context, key string, cs *v1alpha1.CloneSet, pod *corev1.Pod, m LifecycleMove, done *batch) error {
	if pod == nil {
		return nil
	}
	now := r.Clock.Now()
	patch, err := lifecycle.Patch(m.To, now)
	if err != nil {
		return err
	}
	r.Expectations.ExpectLifecycle(key, pod.Name, string(m.To), now)
	if err := r.Client.Patch(ctx, engine.Ref(pod), client.RawPatch(types.MergePatchType, patch)); err != nil {
		r.Expectations.Drop(key, pod.Name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		r.event(cs, corev1.EventTypeWarning, "FailedLifecycle", "move pod %s to %s: %v", pod.Name, m.To, err)
		return fmt.Errorf("move pod %s to lifecycle state %s: %w", pod.Name, m.To, err)
	}
	done.add("Lifecycle"+string(m.To), "moved to "+string(m.To), pod.Name, m.Reason)
	if !m.MarkNotReady || !podreadiness.HasGate(pod) {
		return nil
	}
	h, ok := holders.LifecycleHook(m.To)
	if !ok {
		return nil
	}
	// The holder joins whatever else holds the pod (pkg/holders); the pod readiness controller
	// drops it once the pod has left the hook's state.
	patch, err = inplace.ConditionPatch(appspub.KruisePodReadyConditionType, corev1.ConditionFalse, "",
		holders.Format(holders.With(holders.Of(pod), h)), now)
	if err != nil {
		return err
	}
	if err := r.Client.Status().Patch(ctx, engine.Ref(pod), client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}
