package ephemeraljob

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// The controller's permissions, generated into config/rbac. ephemeraljobs patch: the finalizer
// OpenKruise puts on its jobs is taken off a job being deleted.
// +kubebuilder:rbac:groups=apps.kruise.io,resources=ephemeraljobs,verbs=list;watch;patch;delete
// +kubebuilder:rbac:groups=apps.kruise.io,resources=ephemeraljobs/status,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=pods/ephemeralcontainers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler runs EphemeralJobs: observe → plan (Compute) → apply. It is the only writer of their
// status and of the ephemeral containers it injects.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock

	pending *pending
}

// SetupWithManager registers the controller with workers parallel reconciles: jobs, and the pods
// their selectors match.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	r.pending = newPending()
	return ctrl.NewControllerManagedBy(mgr).
		Named("ephemeraljob-controller").
		For(&v1alpha1.EphemeralJob{}).
		Watches(&corev1.Pod{}, handler.Funcs{
			CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.enqueueFor(ctx, q, e.Object.(*corev1.Pod))
			},
			UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				old, cur := e.ObjectOld.(*corev1.Pod), e.ObjectNew.(*corev1.Pod)
				if podChanged(old, cur) {
					r.enqueueFor(ctx, q, old, cur)
				}
			},
			DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if pod, ok := e.Object.(*corev1.Pod); ok {
					r.enqueueFor(ctx, q, pod)
				}
			},
		}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// podChanged reports whether a pod update changes what a plan reads of the pod.
func podChanged(old, cur *corev1.Pod) bool {
	return old.Status.Phase != cur.Status.Phase || (old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil) ||
		!labels.Equals(old.Labels, cur.Labels) || len(old.Spec.EphemeralContainers) != len(cur.Spec.EphemeralContainers) ||
		fmt.Sprint(old.Status.EphemeralContainerStatuses) != fmt.Sprint(cur.Status.EphemeralContainerStatuses)
}

// enqueueFor enqueues the unfinished jobs of the pods' namespace whose selector matches one of
// pods.
func (r *Reconciler) enqueueFor(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], pods ...*corev1.Pod) {
	jobs := &v1alpha1.EphemeralJobList{}
	if err := r.Client.List(ctx, jobs, client.InNamespace(pods[0].Namespace)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list EphemeralJobs for a pod change")
		return
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if j.Status.CompletionTime != nil || j.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
		if err != nil {
			continue
		}
		for _, pod := range pods {
			if sel.Matches(labels.Set(pod.Labels)) {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: j.Namespace, Name: j.Name}})
				break
			}
		}
	}
}

// Reconcile moves one EphemeralJob one step: observe, plan, apply.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := req.String()
	job := &v1alpha1.EphemeralJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, job); err != nil {
		if apierrors.IsNotFound(err) {
			r.pending.forget(key)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if job.DeletionTimestamp != nil {
		r.pending.forget(key)
		return ctrl.Result{}, r.releaseFinalizer(ctx, job)
	}
	snap, err := r.observe(ctx, job)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("observe EphemeralJob %s: %w", key, err)
	}
	plan := Compute(snap, r.Clock.Now())
	ctrl.LoggerFrom(ctx).V(1).Info("planned", "note", plan.Note)
	if err := r.apply(ctx, job, plan); err != nil {
		return ctrl.Result{}, err
	}
	if plan.RequeueAfter > 0 {
		// A second late, so that the clock has surely passed the deadline or TTL.
		return ctrl.Result{RequeueAfter: plan.RequeueAfter + time.Second}, nil
	}
	return ctrl.Result{}, nil
}

// observe reads the job's pods from the cache: those of its namespace its selector matches.
func (r *Reconciler) observe(ctx context.Context, job *v1alpha1.EphemeralJob) (Snapshot, error) {
	snap := Snapshot{Job: job}
	if job.Spec.Selector == nil {
		snap.SelectorError = "required"
		return snap, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		snap.SelectorError = err.Error()
		return snap, nil
	}
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return snap, err
	}
	for i := range pods.Items {
		snap.Pods = append(snap.Pods, &pods.Items[i])
	}
	snap.Pending = r.pending.observe(job.Namespace+"/"+job.Name, job, snap.Pods, r.Clock.Now())
	return snap, nil
}
