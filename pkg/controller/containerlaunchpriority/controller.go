package containerlaunchpriority

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reasons of the controller's events, on the pod.
const (
	ReasonReleased     = "LaunchBarrierReleased"
	ReasonNotOwned     = "LaunchBarrierNotOwned"
	controllerName     = "container-launch-priority-controller"
	podKind, podAPIVer = "Pod", "v1"
)

// Reconciler is the container launch priority controller. Pods come from the manager's cache;
// barrier ConfigMaps are watched by metadata only (their deletion) and read from the API server
// (Live) when a pod needs a key, so no ConfigMap data is cached.
type Reconciler struct {
	Client   client.Client
	Live     client.Reader
	Recorder events.EventRecorder
}

// SetupWithManager runs the controller on the leader with workers workers; only pods Due, and the
// pods whose barrier is deleted, are queued.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Live == nil {
		r.Live = mgr.GetAPIReader()
	}
	due := predicate.NewPredicateFuncs(func(o client.Object) bool {
		pod, ok := o.(*corev1.Pod)
		return ok && Due(pod)
	})
	barrier := &metav1.PartialObjectMetadata{}
	barrier.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	deleted := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return ctrl.NewControllerManagedBy(mgr).Named(controllerName).
		For(&corev1.Pod{}, builder.WithPredicates(due)).
		Watches(barrier, handler.EnqueueRequestsFromMapFunc(podOfBarrier), builder.WithPredicates(deleted)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// podOfBarrier maps a barrier ConfigMap to the pod that owns it.
func podOfBarrier(_ context.Context, o client.Object) []reconcile.Request {
	if !strings.HasSuffix(o.GetName(), appspub.BarrierConfigMapSuffix) {
		return nil
	}
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == podKind && ref.APIVersion == podAPIVer && ref.Name+appspub.BarrierConfigMapSuffix == o.GetName() {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}}}
		}
	}
	return nil
}

// Reconcile brings the pod's barrier to what PlanPod decides.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !Asks(pod) {
		return ctrl.Result{}, nil
	}
	cm, b, err := r.observe(ctx, pod)
	if err != nil {
		return ctrl.Result{}, err
	}
	plan := PlanPod(pod, b)
	log := ctrl.LoggerFrom(ctx).WithValues("pod", klog.KObj(pod))
	if err := r.apply(ctx, pod, cm, plan); err != nil {
		return ctrl.Result{}, err
	}
	if plan.Recreate || plan.Create || len(plan.Release) > 0 || plan.Complete || plan.Blocked {
		log.V(1).Info("launch barrier", "create", plan.Create, "release", plan.Release, "complete", plan.Complete, "reason", plan.Reason)
	}
	if plan.Recreate { // the stale barrier's deletion queues the pod too
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return ctrl.Result{}, nil
}

// observe reads the pod's barrier from the API server.
func (r *Reconciler) observe(ctx context.Context, pod *corev1.Pod) (*corev1.ConfigMap, Barrier, error) {
	cm := &corev1.ConfigMap{}
	err := r.Live.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: BarrierName(pod)}, cm)
	if apierrors.IsNotFound(err) {
		return nil, Barrier{}, nil
	} else if err != nil {
		return nil, Barrier{}, fmt.Errorf("read the launch barrier of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	b := Barrier{Exists: true, Keys: map[string]bool{}}
	for k := range cm.Data {
		b.Keys[k] = true
	}
	for _, ref := range cm.OwnerReferences {
		if ref.Kind == podKind && ref.APIVersion == podAPIVer && ref.Name == pod.Name {
			b.OwnerUID = ref.UID
		}
	}
	return cm, b, nil
}

// apply is the only writer: the barrier (created, replaced, keys added) and the pod's completed
// annotation.
func (r *Reconciler) apply(ctx context.Context, pod *corev1.Pod, cm *corev1.ConfigMap, plan Plan) error {
	switch {
	case plan.Blocked:
		r.event(pod, corev1.EventTypeWarning, ReasonNotOwned, plan.Reason)
		return nil
	case plan.Recreate:
		err := r.Client.Delete(ctx, cm, client.Preconditions{UID: &cm.UID, ResourceVersion: &cm.ResourceVersion})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete the stale launch barrier %s/%s: %w", cm.Namespace, cm.Name, err)
		}
		return nil
	case plan.Create:
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: BarrierName(pod),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: podAPIVer, Kind: podKind, Name: pod.Name, UID: pod.UID}}},
			Data: map[string]string{}}
		for _, k := range plan.Release {
			cm.Data[k] = "true"
		}
		if err := r.Client.Create(ctx, cm); err != nil {
			return fmt.Errorf("create the launch barrier of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	case len(plan.Release) > 0:
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		for _, k := range plan.Release {
			cm.Data[k] = "true"
		}
		if err := r.Client.Update(ctx, cm); err != nil {
			return fmt.Errorf("release %v in the launch barrier of pod %s/%s: %w", plan.Release, pod.Namespace, pod.Name, err)
		}
	}
	if len(plan.Release) > 0 {
		r.event(pod, corev1.EventTypeNormal, ReasonReleased, fmt.Sprintf("released %s: %s", strings.Join(plan.Release, ", "), plan.Reason))
	}
	if plan.Complete {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, appspub.ContainerLaunchPriorityCompletedKey)
		if err := r.Client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return client.IgnoreNotFound(fmt.Errorf("mark pod %s/%s launch priority completed: %w", pod.Namespace, pod.Name, err))
		}
	}
	return nil
}

func (r *Reconciler) event(pod *corev1.Pod, kind, reason, note string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(pod, nil, kind, reason, "Launch", "%s", note)
	}
}
