package broadcastjob

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// The controller's permissions, generated into config/rbac. Finalizers: the pods' controller
// reference blocks the job's deletion (OwnerReferencesPermissionEnforcement).
// +kubebuilder:rbac:groups=apps.kruise.io,resources=broadcastjobs,verbs=list;watch;delete
// +kubebuilder:rbac:groups=apps.kruise.io,resources=broadcastjobs/status,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=broadcastjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler runs BroadcastJobs: observe → plan (Compute) → apply. It is the only writer of
// their pods and status.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// APIReader lists a job's pods around the cache when the cache has not shown the controller's
	// writes within expectationTimeout. SetupWithManager defaults it to the manager's.
	APIReader client.Reader
	// OwnerIndexed says the cache indexes pods by controller (podcontrol.IndexOwned); without it
	// the job's pods are found by their appspub.BroadcastJobControllerUIDLabel.
	OwnerIndexed bool

	expectations *podcontrol.Expectations
	// finishing holds the jobs (key → UID) this controller marked finished: until the cache shows
	// it, a reconcile waits instead of planning pods for a job that is over.
	finishing sync.Map
}

// expectationTimeout is how long the controller waits for the cache to show its own pod writes
// before it checks them against the API server (Expectations.Pending).
const expectationTimeout = 30 * time.Second

// cacheRetry is how soon a reconcile that waits for the cache is retried.
const cacheRetry = time.Second

// SetupWithManager registers the controller with workers parallel reconciles: jobs, their pods,
// and node changes that can change where jobs run.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	r.expectations = podcontrol.NewExpectations()
	return ctrl.NewControllerManagedBy(mgr).
		Named("broadcastjob-controller").
		For(&v1beta1.BroadcastJob{}).
		Watches(&corev1.Pod{}, podcontrol.ToController(gvk.GroupKind()), builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return podChanged(e.ObjectOld.(*corev1.Pod), e.ObjectNew.(*corev1.Pod))
		}})).
		Watches(&corev1.Node{}, handler.Funcs{
			CreateFunc: func(ctx context.Context, _ event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.enqueueRunning(ctx, q)
			},
			UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if nodeeligibility.Relevant(e.ObjectOld.(*corev1.Node), e.ObjectNew.(*corev1.Node)) {
					r.enqueueRunning(ctx, q)
				}
			},
			DeleteFunc: func(ctx context.Context, _ event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.enqueueRunning(ctx, q)
			},
		}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// enqueueRunning enqueues every job not finished: a node came, went or changed what it takes.
func (r *Reconciler) enqueueRunning(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	jobs := &v1beta1.BroadcastJobList{}
	if err := r.Client.List(ctx, jobs); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list BroadcastJobs for a node change")
		return
	}
	for i := range jobs.Items {
		if j := &jobs.Items[i]; !Finished(j) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: j.Namespace, Name: j.Name}})
		}
	}
}

// podChanged reports whether a pod update changes what a plan reads of the pod.
func podChanged(old, cur *corev1.Pod) bool {
	return old.Status.Phase != cur.Status.Phase || (old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil) ||
		old.Spec.NodeName != cur.Spec.NodeName || restarts(old) != restarts(cur) ||
		old.Labels[appspub.BroadcastJobControllerUIDLabel] != cur.Labels[appspub.BroadcastJobControllerUIDLabel]
}

// Reconcile moves one BroadcastJob one step: observe, plan, apply.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := req.String()
	job := &v1beta1.BroadcastJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, job); err != nil {
		if apierrors.IsNotFound(err) {
			r.expectations.Forget(key)
			r.finishing.Delete(key)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if job.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // its pods go with garbage collection
	}
	if r.awaitFinished(key, job) {
		return ctrl.Result{RequeueAfter: cacheRetry}, nil
	}
	now := r.Clock.Now()
	snap, err := r.observe(ctx, job, r.Client, r.OwnerIndexed)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("observe BroadcastJob %s: %w", key, err)
	}
	if !Finished(job) {
		wait, err := r.expectations.Pending(key, podsByName(snap.Pods), now, expectationTimeout, func() (map[string]*corev1.Pod, error) {
			ctrl.LoggerFrom(ctx).Info("pod writes not in the cache after the expectation timeout; checking them against the API server",
				"timeout", expectationTimeout)
			live, err := r.observe(ctx, job, r.APIReader, false)
			return podsByName(live.Pods), err
		})
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("check BroadcastJob %s's pod writes against the API server: %w", key, err)
		}
		if wait {
			return ctrl.Result{RequeueAfter: cacheRetry}, nil
		}
	}
	plan := Compute(snap, now)
	if err := r.apply(ctx, job, plan); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: plan.RequeueAfter}, nil
}

// awaitFinished reports whether the cache has yet to show that this controller finished job.
func (r *Reconciler) awaitFinished(key string, job *v1beta1.BroadcastJob) bool {
	uid, ok := r.finishing.Load(key)
	switch {
	case !ok:
		return false
	case uid != job.UID || Finished(job):
		r.finishing.Delete(key)
		return false
	}
	return true
}
