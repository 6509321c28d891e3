package cloneset

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// The controller's permissions, generated into config/rbac.
// +kubebuilder:rbac:groups=apps.kruise.io,resources=clonesets,verbs=list;watch;patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=clonesets/status,verbs=patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=clonesets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;create;delete;patch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods/resize,verbs=patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=list;watch;create;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests,verbs=list;watch;create

// Reconciler runs CloneSets: observe → plan → apply → status. It is the only writer of the pods,
// revisions and status of the CloneSets it manages.
type Reconciler struct {
	Client   client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Expectations hold the writes not yet seen in the cache, so a stale cache never causes a
	// second create or delete.
	Expectations *podcontrol.Expectations
	// APIReader reads around the cache, from the API server: the pods of a CloneSet whose writes
	// the cache has not shown within expectationTimeout (Expectations.Pending). SetupWithManager
	// defaults it to the manager's.
	APIReader client.Reader
	// Engine carries out in-place updates (pkg/machinery/engine).
	Engine engine.Engine
	// PartitionRollback is the feature gate CloneSetPartitionRollback (Options.PartitionRollback).
	PartitionRollback bool
	// PreDownload is the feature gate PreDownloadImageForInPlaceUpdate: an update revision with new
	// images gets ImagePullJobs that pull them onto the nodes of the pods still to update.
	PreDownload bool
	// RecreateOnClaimChange is the feature gate RecreatePodWhenChangeVCTInCloneSetGate: a template
	// change made together with a volumeClaimTemplates change recreates pods instead of updating
	// them in place. Without it, claim templates apply to new pods only.
	RecreateOnClaimChange bool
	// OwnerIndexed says the client's cache indexes pods and revisions by controller
	// (podcontrol.IndexOwned), so that pods relabelled out of the selector are found and released,
	// and the revisions are read by their owner.
	OwnerIndexed bool
	// PreparingUpdateAsUpdate is the feature gate PreparingUpdateAsUpdate (Options.PreparingUpdateAsUpdate).
	PreparingUpdateAsUpdate bool
	// ScalingExcludePreparingDelete is kruise-manager's --cloneset-scaling-exclude-preparing-delete
	// (Options.ScalingExcludePreparingDelete).
	ScalingExcludePreparingDelete bool

	waits  podcontrol.WaitReporter
	status podcontrol.StatusPacer
	pacer  podcontrol.ReconcilePacer
	// podIndex reads the pods from the manager's pod informer without copies (SetupWithManager);
	// nil: Client lists them.
	podIndex *podcontrol.PodIndex
	// rolloutStarts holds when this manager saw each CloneSet's update revision change (key
	// namespace/name → time.Time), for the rollout duration metric.
	rolloutStarts sync.Map
}

// SetupWithManager registers the controller with workers parallel reconciles.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Expectations == nil {
		r.Expectations = podcontrol.NewExpectations()
	}
	if r.Engine == nil {
		r.Engine = engine.New(r.Client, r.Clock, inplace.Options{})
	}
	idx, err := podcontrol.NewPodIndex(context.Background(), mgr.GetCache())
	if err != nil {
		return err
	}
	r.podIndex = idx
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.CloneSet{}).
		Watches(&corev1.Pod{}, podcontrol.ToController(gvk.GroupKind())).
		Owns(&appsv1.ControllerRevision{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.orphanOwners), builder.WithPredicates(podcontrol.OrphanPods)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// orphanOwners are the CloneSets of the pod's namespace whose selector matches it.
func (r *Reconciler) orphanOwners(ctx context.Context, o client.Object) []reconcile.Request {
	return podcontrol.Selecting(ctx, r.Client, o, &v1alpha1.CloneSetList{},
		func(w client.Object) *metav1.LabelSelector { return w.(*v1alpha1.CloneSet).Spec.Selector }, nil)
}

// expectationTimeout is how long the controller waits for the cache to show its own writes before
// it checks them against the API server (Expectations.Pending).
const expectationTimeout = 30 * time.Second

// Reconcile brings one CloneSet one step closer to its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if hold := r.pacer.Hold(req.String(), r.Clock.Now()); hold > 0 {
		return ctrl.Result{RequeueAfter: hold}, nil
	}
	cs := &v1alpha1.CloneSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, cs); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if cs.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // owned pods and revisions go with garbage collection
	}
	now := r.Clock.Now()
	var think time.Duration // observe, plan and status: what grows with the pods
	defer func() { r.pacer.Done(req.String(), think, r.Clock.Now()) }()
	obs, err := r.observe(ctx, cs, false)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("observe cloneset %s: %w", req, err)
	}
	wait, err := r.pendingWrites(ctx, cs, obs, now)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("check cloneset %s's pod writes against the API server: %w", req, err)
	}
	if wait {
		think = r.Clock.Since(now)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	plan := Compute(obs.snap, now, Options{PartitionRollback: r.PartitionRollback, PreparingUpdateAsUpdate: r.PreparingUpdateAsUpdate,
		ScalingExcludePreparingDelete: r.ScalingExcludePreparingDelete})
	think = r.Clock.Since(now)
	errs := r.apply(ctx, cs, obs, plan)
	var preDownloadErr error
	if r.PreDownload {
		if preDownloadErr = r.syncPreDownload(ctx, cs, obs); preDownloadErr != nil {
			r.event(cs, corev1.EventTypeWarning, "FailedCreateImagePullJob", "%v", preDownloadErr)
		}
	}
	r.waits.Report(r.Recorder, cs, req.String(), refusalMessage(cs, plan.Refusals), plan.Notes)
	statusStart := r.Clock.Now()
	status := ComputeStatus(obs.snap, now, cs.Status, cs.Generation, errs)
	status.CollisionCount = obs.collisionCount
	requeue := plan.RequeueAfter(now)
	if at := ProgressDeadline(&cs.Spec, &status); !at.IsZero() {
		if d := max(at.Sub(now), 0) + time.Second; requeue == 0 || d < requeue {
			requeue = d // a second late: stored times have whole seconds
		}
	}
	r.reportProgress(cs, &status)
	r.reportMetrics(cs, obs, status, now)
	think += r.Clock.Since(statusStart)
	if requeue, err = r.settleStatus(ctx, cs, status, now, requeue); err != nil {
		return ctrl.Result{}, err
	}
	if errs.Scale != nil {
		return ctrl.Result{}, errs.Scale
	}
	if errs.Update != nil {
		return ctrl.Result{}, errs.Update
	}
	if preDownloadErr != nil {
		return ctrl.Result{}, preDownloadErr
	}
	if len(errs.BudgetWaits) > 0 && (requeue == 0 || podcontrol.BudgetRetry < requeue) {
		requeue = podcontrol.BudgetRetry // the budget frees as other pods come back
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// forget drops what the controller keeps in memory about a CloneSet that is gone.
func (r *Reconciler) forget(req ctrl.Request) {
	r.Expectations.Forget(req.String())
	r.waits.Forget(req.String())
	r.status.Forget(req.String())
	r.pacer.Forget(req.String())
	workload(req.Namespace, req.Name).Forget()
	r.rolloutStarts.Delete(req.String())
}

// pendingWrites reports whether the controller's own pod writes are not in the cache yet (the plan
// then waits); writes still missing after expectationTimeout are checked against the API server.
func (r *Reconciler) pendingWrites(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation, now time.Time) (bool, error) {
	key := client.ObjectKeyFromObject(cs).String()
	return r.Expectations.Pending(key, obs.pods, now, expectationTimeout, func() (map[string]*corev1.Pod, error) {
		cacheLagReads.Inc()
		ctrl.LoggerFrom(ctx).Info("pod writes not in the cache after the expectation timeout; checking them against the API server",
			"timeout", expectationTimeout)
		live, err := r.observe(ctx, cs, true) // the pods as observe takes them from the cache
		if err != nil {
			return nil, err
		}
		return live.pods, nil
	})
}

// settleStatus writes status when it differs from the stored one and the pacing lets it (counters
// that move during a rollout wait, at most a second), and returns requeue, shortened to when the
// held-back status is due.
func (r *Reconciler) settleStatus(ctx context.Context, cs *v1alpha1.CloneSet, status v1alpha1.CloneSetStatus, now time.Time, requeue time.Duration) (time.Duration, error) {
	if equality.Semantic.DeepEqual(cs.Status, status) {
		return requeue, nil
	}
	key := client.ObjectKeyFromObject(cs).String()
	if wait := r.status.Wait(key, significant(&cs.Status, &status, ptr.Deref(cs.Spec.Replicas, 1)), now); wait > 0 {
		if requeue == 0 || wait < requeue {
			requeue = wait // the held-back counters are written then, if no event comes first
		}
		return requeue, nil
	}
	if err := r.writeStatus(ctx, cs, status); err != nil {
		return requeue, err
	}
	r.status.Wrote(key, now)
	return requeue, nil
}
