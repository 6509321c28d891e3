package podreadiness

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/holders"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
	"github.com/kruise-ng/kruise/pkg/core/podgate"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
)

// OwnerGrace is how long a new pod's workload has to open the gate before this controller does.
const OwnerGrace = 5 * time.Second

// RequestChecker tells whether a ContainerRecreateRequest still holds its pod not ready.
type RequestChecker interface {
	// Holding reports whether request namespace/name exists, has acquired its pod
	// (crr.apps.kruise.io/unready-acquired finalizer) and has neither completed nor been deleted.
	Holding(namespace, name string) bool
}

// Desired returns the holders the pod's KruisePodReady condition should list (it is True when
// there are none). From the holders it lists now it drops only Kruise's own that are over: a
// Lifecycle holder once the pod has left the hook's state (pkg/core/holders.LifecycleHook), a
// ContainerRecreateRequest holder once the pod no longer names the request in
// crr.apps.kruise.io/unready and requests reports it released. Other agents' holders stay. The
// workload adds Lifecycle holders itself (it moves the pod into the hook's state); a pod that names
// a request in crr.apps.kruise.io/unready gets its holder here.
func Desired(pod *corev1.Pod, requests RequestChecker) []holders.Holder {
	unready := pod.Annotations[v1alpha1.ContainerRecreateRequestUnreadyPodKey]
	held, _ := holders.LifecycleHook(lifecycle.State(pod))
	var out []holders.Holder
	for _, h := range holders.Of(pod) {
		switch h.UserAgent {
		case holders.Lifecycle:
			if known(h.Key) && h != held {
				continue
			}
		case holders.ContainerRecreateRequest:
			ns, name, ok := holders.RequestOf(h)
			if ok && ns == pod.Namespace && name != unready && !requests.Holding(ns, name) {
				continue
			}
		}
		out = append(out, h)
	}
	if unready != "" {
		out = holders.With(out, holders.ForRequest(pod.Namespace, unready))
	}
	return out
}

// known reports whether key is one of the Lifecycle keys Kruise manages.
func known(key string) bool {
	return key == holders.PreDeleteKey || key == holders.PreUpdateKey || key == holders.PreNormalKey
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

// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests,verbs=list;watch

// Reconcile sets the pod's KruisePodReady condition to its Desired holders.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// The cache's own pod, not a copy (one per pod event of every rollout): read-only here, and the
	// write below goes to its identity alone.
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !podgate.HasKruisePodReady(pod) || pod.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	want := Desired(pod, requestChecker{ctx: ctx, c: r.Client})
	cur := current(pod)
	if cur == nil {
		if age := r.Clock.Since(pod.CreationTimestamp.Time); age < OwnerGrace {
			return ctrl.Result{RequeueAfter: OwnerGrace - age}, nil
		}
	} else if (len(want) == 0 && cur.Status == corev1.ConditionTrue) ||
		(len(want) > 0 && cur.Status == corev1.ConditionFalse && holders.Equal(want, holders.Of(pod))) {
		return ctrl.Result{}, nil
	}
	status, msg := corev1.ConditionFalse, holders.Format(want)
	if len(want) == 0 {
		// OpenKruise leaves "[]" once the last holder is gone; a condition never held has none.
		status = corev1.ConditionTrue
		if cur == nil || cur.Message == "" {
			msg = ""
		}
	}
	patch, err := inplace.ConditionPatch(appspub.KruisePodReadyConditionType, status, "", msg, r.Clock.Now())
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Client.Status().Patch(ctx, engine.Ref(pod), client.RawPatch(types.StrategicMergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("set %s of pod %s (holders %s): %w", appspub.KruisePodReadyConditionType, pod.Name, holders.Format(want), err)
	}
	return ctrl.Result{}, nil
}

// requestChecker reads ContainerRecreateRequests from the cache.
type requestChecker struct {
	ctx context.Context
	c   client.Reader
}

func (rc requestChecker) Holding(namespace, name string) bool {
	crr := &v1alpha1.ContainerRecreateRequest{}
	if err := rc.c.Get(rc.ctx, client.ObjectKey{Namespace: namespace, Name: name}, crr); err != nil {
		// Gone: released. Any other error: keep the hold, the next event retries.
		return !apierrors.IsNotFound(err)
	}
	return crr.DeletionTimestamp == nil && crr.Status.Phase != v1alpha1.ContainerRecreateRequestCompleted &&
		slices.Contains(crr.Finalizers, v1alpha1.ContainerRecreateRequestUnreadyAcquiredKey)
}

// SetupWithManager watches the pods that carry the gate (gatedPods).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	// A request's end releases its holder on the pod.
	requestPod := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		crr, ok := o.(*v1alpha1.ContainerRecreateRequest)
		if !ok {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: crr.Namespace, Name: crr.Spec.PodName}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("pod-readiness-controller").
		For(&corev1.Pod{}, builder.WithPredicates(gatedPods())).
		Watches(&v1alpha1.ContainerRecreateRequest{}, requestPod).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}
