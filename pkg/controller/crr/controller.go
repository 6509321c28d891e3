package crr

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/holders"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/podgate"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests,verbs=list;watch;patch;delete
// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests/status,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch

// Reconciler runs the manager's side of ContainerRecreateRequests.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
}

// SetupWithManager watches requests and, for their unready hold, their pods.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("containerrecreaterequest-controller").
		For(&v1alpha1.ContainerRecreateRequest{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			var reqs []reconcile.Request
			if name := o.GetAnnotations()[v1alpha1.ContainerRecreateRequestUnreadyPodKey]; name != "" {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}})
			}
			if pod, ok := o.(*corev1.Pod); ok {
				for _, h := range holders.Of(pod) {
					if ns, name, ok := holders.RequestOf(h); ok && ns == pod.Namespace {
						reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
					}
				}
			}
			return reqs
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// Reconcile moves one request a step.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	crr := &v1alpha1.ContainerRecreateRequest{}
	if err := r.Client.Get(ctx, req.NamespacedName, crr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if crr.DeletionTimestamp != nil {
		return ctrl.Result{}, r.releasePod(ctx, crr)
	}
	now := r.Clock.Now()
	if crr.Status.Phase == v1alpha1.ContainerRecreateRequestCompleted {
		return r.finished(ctx, crr, now)
	}
	pod := &corev1.Pod{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: crr.Namespace, Name: crr.Spec.PodName}, pod)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && string(pod.UID) != crr.Labels[v1alpha1.ContainerRecreateRequestPodUIDKey]):
		return ctrl.Result{}, r.complete(ctx, crr, now, "the pod is gone or was replaced")
	case err != nil:
		return ctrl.Result{}, err
	case pod.DeletionTimestamp != nil:
		return ctrl.Result{}, r.complete(ctx, crr, now, "the pod is terminating")
	}
	var requeue time.Duration
	if d := crr.Spec.ActiveDeadlineSeconds; d != nil {
		at := crr.CreationTimestamp.Add(time.Duration(*d) * time.Second)
		if !now.Before(at) {
			return ctrl.Result{}, r.complete(ctx, crr, now, fmt.Sprintf("not finished within activeDeadlineSeconds %d", *d))
		}
		requeue = at.Sub(now) + time.Second
	}
	if crr.Status.Phase == "" {
		crr.Status.Phase = v1alpha1.ContainerRecreateRequestPending
		if err := r.Client.Status().Update(ctx, crr); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.holdUnready(ctx, crr, pod, now); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// holdUnready, for a request with unreadyGracePeriodSeconds, asks the pod-readiness controller to
// hold the pod not ready (pod annotation) and, once the pod is seen not ready, records when.
func (r *Reconciler) holdUnready(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest, pod *corev1.Pod, now time.Time) error {
	if crr.Spec.Strategy == nil || crr.Spec.Strategy.UnreadyGracePeriodSeconds == nil || crr.Annotations[v1alpha1.ContainerRecreateRequestUnreadyAcquiredKey] != "" {
		return nil
	}
	if podgate.HasKruisePodReady(pod) {
		if pod.Annotations[v1alpha1.ContainerRecreateRequestUnreadyPodKey] != crr.Name {
			return patchMetadata(ctx, r.Client, pod, "annotations", v1alpha1.ContainerRecreateRequestUnreadyPodKey, crr.Name)
		}
		if !inplace.ConditionIs(pod, appspub.KruisePodReadyConditionType, corev1.ConditionFalse) {
			return nil // the pod-readiness controller has not turned it yet; its write requeues us
		}
	}
	// Without the gate nothing of Kruise's can hold the pod not ready: the grace period starts now.
	// As OpenKruise, the request keeps the unready-acquired finalizer while it holds the pod, so
	// neither manager loses a hold the other took.
	return r.patchAcquired(ctx, crr, now.UTC().Format(time.RFC3339), true)
}

// patchAcquired records (or drops) the request's hold on its pod: the unready-acquired annotation
// (the daemon counts the grace period from it; set only when acquiring) and finalizer.
func (r *Reconciler) patchAcquired(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest, at string, hold bool) error {
	key := v1alpha1.ContainerRecreateRequestUnreadyAcquiredKey
	finalizers := slices.DeleteFunc(slices.Clone(crr.Finalizers), func(f string) bool { return f == key })
	meta := map[string]any{"resourceVersion": crr.ResourceVersion}
	if hold {
		finalizers = append(finalizers, key)
		meta["annotations"] = map[string]any{key: at}
	}
	meta["finalizers"] = finalizers
	body, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	return r.Client.Patch(ctx, crr, client.RawPatch(types.MergePatchType, body))
}

// complete ends a request the daemon will not finish, marking its unfinished containers failed.
func (r *Reconciler) complete(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest, now time.Time, msg string) error {
	st := &crr.Status
	for _, c := range crr.Spec.Containers {
		found := false
		for i := range st.ContainerRecreateStates {
			s := &st.ContainerRecreateStates[i]
			if s.Name == c.Name {
				found = true
				if s.Phase != v1alpha1.ContainerRecreateRequestSucceeded && s.Phase != v1alpha1.ContainerRecreateRequestFailed {
					s.Phase, s.Message = v1alpha1.ContainerRecreateRequestFailed, msg
				}
			}
		}
		if !found {
			st.ContainerRecreateStates = append(st.ContainerRecreateStates, v1alpha1.ContainerRecreateRequestContainerRecreateState{
				Name: c.Name, Phase: v1alpha1.ContainerRecreateRequestFailed, Message: msg})
		}
	}
	t := metav1.NewTime(now)
	st.Phase, st.CompletionTime, st.Message = v1alpha1.ContainerRecreateRequestCompleted, &t, msg
	if r.Recorder != nil {
		r.Recorder.Eventf(crr, nil, corev1.EventTypeWarning, "Completed", "Completed", "%s", msg)
	}
	return r.Client.Status().Update(ctx, crr)
}

// finished cleans up after an ended request: the pod's hold, the active label, and at its TTL
// the request itself.
func (r *Reconciler) finished(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest, now time.Time) (ctrl.Result, error) {
	if err := r.releasePod(ctx, crr); err != nil {
		return ctrl.Result{}, err
	}
	if _, ok := crr.Labels[v1alpha1.ContainerRecreateRequestActiveKey]; ok {
		if err := patchMetadata(ctx, r.Client, crr, "labels", v1alpha1.ContainerRecreateRequestActiveKey, nil); err != nil {
			return ctrl.Result{}, err
		}
	}
	ttl := crr.Spec.TTLSecondsAfterFinished
	if ttl == nil || crr.Status.CompletionTime == nil {
		return ctrl.Result{}, nil
	}
	at := crr.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second)
	if now.Before(at) {
		return ctrl.Result{RequeueAfter: at.Sub(now)}, nil
	}
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Delete(ctx, crr, client.Preconditions{UID: &crr.UID}))
}

// releasePod releases the pod from this request's hold: it drops the pod annotation that asks
// for the hold, and, once the pod readiness controller has dropped the request's holder from the
// pod (or the pod is gone), the request's unready-acquired finalizer -- also for a request
// OpenKruise acquired before a takeover.
func (r *Reconciler) releasePod(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest) error {
	pod := &corev1.Pod{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: crr.Namespace, Name: crr.Spec.PodName}, pod)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	found := err == nil && string(pod.UID) == crr.Labels[v1alpha1.ContainerRecreateRequestPodUIDKey]
	if found && pod.Annotations[v1alpha1.ContainerRecreateRequestUnreadyPodKey] == crr.Name {
		return client.IgnoreNotFound(patchMetadata(ctx, r.Client, pod, "annotations", v1alpha1.ContainerRecreateRequestUnreadyPodKey, nil))
	}
	if !slices.Contains(crr.Finalizers, v1alpha1.ContainerRecreateRequestUnreadyAcquiredKey) {
		return nil
	}
	if found && slices.Contains(holders.Of(pod), holders.ForRequest(crr.Namespace, crr.Name)) {
		return nil // the pod readiness controller releases it; its write requeues us
	}
	return client.IgnoreNotFound(r.patchAcquired(ctx, crr, "", false))
}

// patchMetadata sets (or, with nil, removes) one key of obj's "labels" or "annotations".
func patchMetadata(ctx context.Context, c client.Client, obj client.Object, field, key string, value any) error {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{field: map[string]any{key: value}}})
	if err != nil {
		return err
	}
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, body))
}
