// Package podreadiness keeps the KruisePodReady condition of the pods that carry its readiness gate
// (added by the pod webhook, pkg/webhook/podreadiness): True unless something of Kruise's holds the
// pod, so that such a pod is Ready exactly when its containers are ready and nothing of Kruise's
// holds it.
//
// The workload that creates a pod opens the gate in its own first status write; this controller
// repairs the pods whose condition is still missing (or wrong) after OwnerGrace, so the normal path
// costs no extra write.
package podreadiness

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/inplace"
	"github.com/kruise-ng/kruise/pkg/lifecycle"
)

// OwnerGrace is how long a new pod's workload has to open the gate before this controller does.
const OwnerGrace = 5 * time.Second

// HasGate reports whether the pod has the KruisePodReady readiness gate.
func HasGate(pod *corev1.Pod) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if g.ConditionType == appspub.KruisePodReadyConditionType {
			return true
		}
	}
	return false
}

// Desired is the KruisePodReady condition the pod should have, with a reason and message when it
// is held. A lifecycle hook with markPodNotReady holds it (pkg/lifecycle.HeldNotReady): the workload
// sets the condition False when the hook takes the pod, and this controller sets it True again once
// the pod has left the hook's states.
func Desired(pod *corev1.Pod) (corev1.ConditionStatus, string, string) {
	if lifecycle.HeldNotReady(pod) {
		c := current(pod)
		return corev1.ConditionFalse, c.Reason, c.Message
	}
	if name := pod.Annotations[v1alpha1.ContainerRecreateRequestUnreadyPodKey]; name != "" {
		return corev1.ConditionFalse, "ContainerRecreateRequest", "held not ready while ContainerRecreateRequest " + name + " recreates containers"
	}
	return corev1.ConditionTrue, "NotHeld", ""
}

// current returns the pod's KruisePodReady condition, or nil.
func current(pod *corev1.Pod) *corev1.PodCondition {
	return inplace.PodCondition(pod, appspub.KruisePodReadyConditionType)
}

// Reconciler writes the condition; it is the only writer of KruisePodReady besides a workload's
// creation write.
type Reconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
}

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch

// Reconcile sets the pod's KruisePodReady condition to Desired.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !HasGate(pod) || pod.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	status, reason, msg := Desired(pod)
	cur := current(pod)
	if cur != nil && cur.Status == status {
		return ctrl.Result{}, nil
	}
	if cur == nil {
		if age := r.Clock.Since(pod.CreationTimestamp.Time); age < OwnerGrace {
			return ctrl.Result{RequeueAfter: OwnerGrace - age}, nil
		}
	}
	var patch []byte
	var err error
	if status == corev1.ConditionTrue {
		patch, err = inplace.OpenPatch(reason, r.Clock.Now(), appspub.KruisePodReadyConditionType)
	} else {
		patch, err = inplace.ConditionPatch(appspub.KruisePodReadyConditionType, status, reason, msg, r.Clock.Now())
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Client.Status().Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("set %s=%s on pod %s: %w", appspub.KruisePodReadyConditionType, status, pod.Name, err)
	}
	return ctrl.Result{}, nil
}

// SetupWithManager watches the pods that carry the gate.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	gated := predicate.NewPredicateFuncs(func(o client.Object) bool {
		pod, ok := o.(*corev1.Pod)
		return ok && HasGate(pod)
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("podreadiness").
		For(&corev1.Pod{}, builder.WithPredicates(gated)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}
