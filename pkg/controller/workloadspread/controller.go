package workloadspread

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=workloadspreads,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=workloadspreads/status,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=clonesets;statefulsets,verbs=list;watch
// The workload finder's (pkg/machinery/workloadfinder):
// +kubebuilder:rbac:groups=apps,resources=deployments;replicasets;statefulsets,verbs=list;watch
// +kubebuilder:rbac:groups=*,resources=*/scale,verbs=get

// Reconciler runs WorkloadSpreads.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	Finder   *workloadfinder.Finder

	lastRun sync.Map // spread namespace/name → time.Time its last recount started
}

// recountEvery is the least time between two recounts of one spread: a burst of pod events (a
// scale-up of hundreds) is recounted a few times a second, not once per pod, each recount
// reading every pod of the spread. Admission keeps its books without the controller.
const recountEvery = 250 * time.Millisecond

// conflictRetry is how soon a reconcile whose status write met the webhook's starts again.
const conflictRetry = 100 * time.Millisecond

// SetupWithManager runs the controller on the leader with workers workers.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	inNamespace := handler.EnqueueRequestsFromMapFunc(r.spreadsIn)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("workloadspread-controller").
		For(&appsv1alpha1.WorkloadSpread{}).
		// Pods move the counts; a workload's replicas move the percentages and its revision the
		// deletion costs.
		Watches(&corev1.Pod{}, inNamespace).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers})
	for _, w := range workloadfinder.ReplicaWorkloads() {
		b = b.Watches(w, inNamespace)
	}
	return b.Complete(r)
}

// spreadsIn enqueues the spreads of an object's namespace; a placed pod concerns its spread only.
func (r *Reconciler) spreadsIn(ctx context.Context, o client.Object) []reconcile.Request {
	if pod, ok := o.(*corev1.Pod); ok {
		if m := spreadrules.MatchedOf(pod); m != nil {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.Namespace, Name: m.Name}}}
		}
	}
	list := &appsv1alpha1.WorkloadSpreadList{}
	// Only names are read: no deep copies on every pod event.
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: list.Items[i].Namespace, Name: list.Items[i].Name}})
	}
	return out
}

// Reconcile brings one spread's pods and status up to date: observe → plan → apply.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	spread := &appsv1alpha1.WorkloadSpread{}
	if err := r.Client.Get(ctx, req.NamespacedName, spread); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if spread.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	now := r.Clock.Now()
	if last, ok := r.lastRun.Load(req.String()); ok {
		if wait := recountEvery - now.Sub(last.(time.Time)); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	r.lastRun.Store(req.String(), now)
	snap, err := r.observe(ctx, spread)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := computePlan(snap, now)
	if err := r.apply(ctx, spread, p); err != nil {
		if errors.Is(err, errConflict) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if !p.recheckAt.IsZero() {
		return ctrl.Result{RequeueAfter: max(p.recheckAt.Sub(now), time.Second)}, nil
	}
	return ctrl.Result{}, nil
}
