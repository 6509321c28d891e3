package sidecarterminator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests,verbs=list;watch;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler is the SidecarTerminator controller.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// SetupWithManager runs the controller on the leader with workers workers; only pods Due are
// queued.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	due := predicate.NewPredicateFuncs(func(o client.Object) bool {
		pod, ok := o.(*corev1.Pod)
		return ok && Due(pod)
	})
	return ctrl.NewControllerManagedBy(mgr).Named("sidecarterminator-controller").
		For(&corev1.Pod{}, builder.WithPredicates(due)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// CRRName names the ContainerRecreateRequest that stops a pod's sidecars.
func CRRName(pod *corev1.Pod) string { return fmt.Sprintf("sidecar-termination-%s", pod.UID) }

// Reconcile ends a pod that is Due: its phase and condition first, then the request to stop its
// sidecars.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !Due(pod) {
		return ctrl.Result{}, nil
	}
	if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		status := corev1.PodStatus{Phase: Phase(pod), Conditions: []corev1.PodCondition{{Type: SidecarTerminated, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.Now(), Message: "Terminated by Sidecar Terminator"}}}
		raw, err := json.Marshal(map[string]any{"status": status})
		if err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Client.Status().Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, raw)); err != nil {
			return ctrl.Result{}, fmt.Errorf("end pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	running := Running(pod)
	crr := &v1alpha1.ContainerRecreateRequest{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: CRRName(pod)}, crr)
	if err == nil || !apierrors.IsNotFound(err) || len(running) == 0 {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	crr = &v1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: CRRName(pod),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(pod, corev1.SchemeGroupVersion.WithKind("Pod"))}},
		Spec: v1alpha1.ContainerRecreateRequestSpec{PodName: pod.Name,
			Strategy: &v1alpha1.ContainerRecreateRequestStrategy{ForceRecreate: true, FailurePolicy: v1alpha1.ContainerRecreateRequestFailurePolicyIgnore}}}
	for _, name := range running {
		crr.Spec.Containers = append(crr.Spec.Containers, v1alpha1.ContainerRecreateRequestContainer{Name: name})
	}
	if err := r.Client.Create(ctx, crr); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, fmt.Errorf("stop the sidecars of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(pod, nil, corev1.EventTypeNormal, "SidecarTerminator", "Terminate",
			"the main containers have exited: stopping sidecars %s", strings.Join(running, ", "))
	}
	return ctrl.Result{}, nil
}
