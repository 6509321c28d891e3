package statefulset

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/rolloutmetrics"
)

// The controller's permissions, generated into config/rbac.
// +kubebuilder:rbac:groups=apps.kruise.io,resources=statefulsets,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=statefulsets/status,verbs=patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=statefulsets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;create;delete;patch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=list;watch;create;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler runs Advanced StatefulSets: observe → plan → apply → status. It is the only writer of
// the pods, claims, revisions and status of the sets it manages.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Expectations hold the writes not yet seen in the cache.
	Expectations *podcontrol.Expectations
	// APIReader reads the pods around the cache when the cache has not shown the controller's
	// writes within expectationTimeout. SetupWithManager defaults it to the manager's.
	APIReader client.Reader
	// Engine carries out in-place updates (pkg/machinery/engine).
	Engine engine.Engine
	// AutoDeletePVC is the feature gate StatefulSetAutoDeletePVC: persistentVolumeClaimRetentionPolicy
	// is honoured.
	AutoDeletePVC bool
	// StartOrdinal is the feature gate StatefulSetStartOrdinal: ordinals.start is honoured (else
	// ordinals start at 0).
	StartOrdinal bool
	// PodIndexLabel is the feature gate PodIndexLabel: pods carry apps.kubernetes.io/pod-index.
	PodIndexLabel bool
	// OwnerIndexed says the client's cache indexes pods and revisions by controller
	// (podcontrol.IndexOwned), so that pods relabelled out of the selector are found and released,
	// and the revisions are read by their owner.
	OwnerIndexed bool
	// PreDownload is the feature gate PreDownloadImageForInPlaceUpdate: an update revision with new
	// images gets ImagePullJobs that pull them onto the nodes of the pods still to update.
	PreDownload bool

	waits  podcontrol.WaitReporter
	status podcontrol.StatusPacer
	pacer  podcontrol.ReconcilePacer
	// podIndex reads the pods from the manager's pod informer without copies (SetupWithManager);
	// nil: Client lists them.
	podIndex *podcontrol.PodIndex
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
		Named("advanced-statefulset").
		For(&v1beta1.StatefulSet{}).
		Watches(&corev1.Pod{}, podcontrol.ToController(gvk.GroupKind())).
		Owns(&appsv1.ControllerRevision{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.orphanOwners), builder.WithPredicates(podcontrol.OrphanPods)).
		Watches(&corev1.PersistentVolumeClaim{}, handler.EnqueueRequestsFromMapFunc(r.claimOwner)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// expectationTimeout is how long the controller waits for the cache to show its own writes before
// it checks them against the API server (Expectations.Pending).
const expectationTimeout = 30 * time.Second

// Reconcile brings one Advanced StatefulSet one step closer to its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if hold := r.pacer.Hold(req.String(), r.Clock.Now()); hold > 0 {
		return ctrl.Result{RequeueAfter: hold}, nil
	}
	set := &v1beta1.StatefulSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		if apierrors.IsNotFound(err) {
			r.Expectations.Forget(req.String())
			r.waits.Forget(req.String())
			r.status.Forget(req.String())
			r.pacer.Forget(req.String())
			workload(req.Namespace, req.Name).Forget()
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if set.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // owned pods and revisions go with garbage collection
	}
	now := r.Clock.Now()
	var think time.Duration // observe and plan: what grows with the pods (podcontrol.ReconcilePacer)
	defer func() { r.pacer.Done(req.String(), think, r.Clock.Now()) }()
	obs, err := r.observe(ctx, set, false)
	if ref := (*refusal)(nil); errors.As(err, &ref) {
		return r.refuseSpec(ctx, req.String(), set, ref)
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("observe statefulset %s: %w", req, err)
	}
	wait, err := r.Expectations.Pending(req.String(), obs.pods, now, expectationTimeout, func() (map[string]*corev1.Pod, error) {
		live, err := r.observe(ctx, set, true)
		if err != nil {
			return nil, err
		}
		return live.pods, nil
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("check statefulset %s's pod writes against the API server: %w", req, err)
	}
	if wait {
		think = r.Clock.Since(now)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	plan := Compute(obs.snap, now)
	think = r.Clock.Since(now)
	errs := r.apply(ctx, set, obs, plan)
	var preDownloadErr error
	if r.PreDownload {
		if preDownloadErr = r.syncPreDownload(ctx, set, obs); preDownloadErr != nil {
			r.control().Event(r.owner(set), corev1.EventTypeWarning, "FailedCreateImagePullJob", "%v", preDownloadErr)
		}
	}
	r.waits.Report(r.Recorder, set, req.String(), refusalMessage(plan.Refusals), plan.Notes)
	status, statusWait, err := r.syncStatus(ctx, req.String(), set, obs, errs, now)
	if err != nil {
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
	var requeue podcontrol.Requeue
	requeue.At(now, plan.Next)
	requeue.At(now, ProgressDeadlineAt(set, &status))
	requeue.After(statusWait) // the held-back counters are written then, if no event comes first
	if len(errs.BudgetWaits) > 0 {
		requeue.After(podcontrol.BudgetRetry) // the budget frees as other pods come back
	}
	return requeue.Result(), nil
}

// syncStatus computes the set's status, reports its progress and metrics, and writes it when it
// changed -- unless only counters moved within podcontrol.StatusInterval of the last write: then
// it returns how long the write waits.
func (r *Reconciler) syncStatus(ctx context.Context, key string, set *v1beta1.StatefulSet, obs *observation, errs ApplyErrors,
	now time.Time) (v1beta1.StatefulSetStatus, time.Duration, error) {
	status := ComputeStatus(obs.snap, now, set.Status, set.Generation, obs.selector.String(), obs.claims)
	status.CollisionCount = ptr.To(obs.collisionCount)
	status.Conditions = failureConditions(status.Conditions, errs, now)
	status.Conditions = invalidSpecCondition(status.Conditions, nil, now)
	status.Conditions = setCondition(status.Conditions, ConditionProgressing, progressCondition(set, &status, &set.Status, now))
	r.reportProgress(set, &status)
	r.reportMetrics(set, obs, status, now)
	wait, err := r.status.Write(ctx, r.control(), key, set, set.Status, status, significant(&set.Status, &status, ptr.Deref(set.Spec.Replicas, 1)), now)
	return status, wait, err
}

// reportProgress records a Warning event when the Progressing condition turns to
// ProgressDeadlineExceeded, so that a stuck rollout is visible in `kubectl describe`.
func (r *Reconciler) reportProgress(set *v1beta1.StatefulSet, next *v1beta1.StatefulSetStatus) {
	reason := func(conds []v1beta1.StatefulSetCondition) string {
		if c := findCondition(conds, ConditionProgressing); c != nil {
			return c.Reason
		}
		return ""
	}
	if reason(next.Conditions) == ReasonProgressDeadlineExceeded && reason(set.Status.Conditions) != ReasonProgressDeadlineExceeded {
		r.control().Event(r.owner(set), corev1.EventTypeWarning, ReasonProgressDeadlineExceeded,
			"revision %s not rolled out within %s: %d of %d pods updated, %d updated and ready",
			next.UpdateRevision, progressDeadline(set.Annotations), next.UpdatedReplicas, next.Replicas, next.UpdatedReadyReplicas)
	}
}

// refusalMessage says which pods InPlaceOnly leaves on their revision and why, or "".
func refusalMessage(refusals []Refusal) string {
	return podcontrol.RefusalMessage(refusals, "their revision", "revert the template or use podUpdatePolicy InPlaceIfPossible or ReCreate")
}

// reportMetrics sets the set's rollout gauges from the status just computed and, when this status
// ends a rollout (the current revision becomes the update revision), records how long it took
// since the update revision was created.
func (r *Reconciler) reportMetrics(set *v1beta1.StatefulSet, obs *observation, st v1beta1.StatefulSetStatus, now time.Time) {
	want := ptr.Deref(set.Spec.Replicas, 1)
	w := workload(set.Namespace, set.Name)
	w.Set(rolloutmetrics.Counts{Replicas: want, Ready: st.ReadyReplicas, Updated: st.UpdatedReplicas,
		UpdatedReady: st.UpdatedReadyReplicas, Unavailable: max(want-st.AvailableReplicas, 0)})
	before := set.Status.CurrentRevision
	if before != "" && before != st.CurrentRevision && st.CurrentRevision == st.UpdateRevision && obs.updateRevision.Name == st.UpdateRevision {
		w.RolloutDone(now.Sub(obs.updateRevision.CreationTimestamp.Time))
	}
}

// claimOwner are the sets of the claim's namespace with claim templates whose selector matches
// it (its capacity feeds status.volumeClaims).
func (r *Reconciler) claimOwner(ctx context.Context, o client.Object) []reconcile.Request {
	return podcontrol.Selecting(ctx, r.Client, o, &v1beta1.StatefulSetList{}, selectorOf, func(w, _ client.Object) bool {
		return len(w.(*v1beta1.StatefulSet).Spec.VolumeClaimTemplates) > 0
	})
}

// orphanOwners are the sets of the pod's namespace whose selector matches it and whose pod it
// would be by name.
func (r *Reconciler) orphanOwners(ctx context.Context, o client.Object) []reconcile.Request {
	return podcontrol.Selecting(ctx, r.Client, o, &v1beta1.StatefulSetList{}, selectorOf, func(w, pod client.Object) bool {
		return ordinal.OrdinalOf(w.GetName(), pod.GetName()) >= 0
	})
}

func selectorOf(w client.Object) *metav1.LabelSelector { return w.(*v1beta1.StatefulSet).Spec.Selector }
