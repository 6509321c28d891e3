package uniteddeployment

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// The controller's permissions, generated into config/rbac. Finalizers: the subset workloads' and
// revisions' controller reference blocks the UnitedDeployment's deletion
// (OwnerReferencesPermissionEnforcement).
// +kubebuilder:rbac:groups=apps.kruise.io,resources=uniteddeployments,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=uniteddeployments/status,verbs=patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=uniteddeployments/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=clonesets,verbs=list;watch;create;update;delete
// +kubebuilder:rbac:groups=apps.kruise.io,resources=statefulsets,verbs=list;watch;create;update;delete
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=list;watch;create;update;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=list;watch;create;update;delete
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler runs UnitedDeployments: observe → plan (Compute) → apply. It is the only writer of
// their subset workloads' spec, their revisions and their status.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// APIReader lists subset workloads around the cache before any is created, so a workload the
	// cache does not show yet is never created twice. SetupWithManager defaults it.
	APIReader client.Reader
	// OwnerIndexed says the client's cache indexes revisions by controller (podcontrol.IndexOwned).
	OwnerIndexed bool
}

var gvk = appsv1alpha1.GroupVersion.WithKind("UnitedDeployment")

// SetupWithManager registers the controller with workers parallel reconciles: UnitedDeployments
// and the subset workloads they control.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	b := ctrl.NewControllerManagedBy(mgr).Named("uniteddeployment-controller").For(&appsv1alpha1.UnitedDeployment{})
	for _, k := range kinds {
		b = b.Owns(k.New())
	}
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: workers}).Complete(r)
}

// Reconcile brings one UnitedDeployment's subset workloads and status in line with its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ud := &appsv1alpha1.UnitedDeployment{}
	if err := r.Client.Get(ctx, req.NamespacedName, ud); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if ud.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	snap, revs, err := r.observe(ctx, ud, r.Client)
	if err != nil {
		return reconcile.Result{}, err
	}
	// The update revision exists before any workload is labelled with it.
	if pending := revs.Pending(); pending != nil {
		ctl := &podcontrol.Control{Client: r.Client}
		if _, err := ctl.ApplyRevision(ctx, pending); err != nil {
			return reconcile.Result{}, err
		}
		revs.ByName[pending.Update.Name] = pending.Update
	}
	plan, err := Compute(snap)
	if err != nil {
		r.event(ud, corev1.EventTypeWarning, "FailedAllocate", "%v", err)
		return reconcile.Result{}, err
	}
	if len(plan.Creates) > 0 {
		// Plan again from the API server: a workload created by the last reconcile may not be in
		// the cache yet.
		if snap, _, err = r.observe(ctx, ud, r.APIReader); err != nil {
			return reconcile.Result{}, err
		}
		if plan, err = Compute(snap); err != nil {
			return reconcile.Result{}, err
		}
	}
	st, err := r.apply(ctx, ud, plan)
	if err == nil {
		r.pruneRevisions(ctx, ud, revs, snap)
	}
	if werr := r.writeStatus(ctx, ud, st); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	var res reconcile.Result
	if !plan.RecheckAt.IsZero() {
		res.RequeueAfter = max(time.Second, plan.RecheckAt.Sub(r.Clock.Now()))
	}
	return res, nil
}

// observe reads ud's revisions (deciding the update revision), its subset workloads (through
// reader) and its pods. It writes nothing.
func (r *Reconciler) observe(ctx context.Context, ud *appsv1alpha1.UnitedDeployment, reader client.Reader) (Snapshot, podcontrol.Revisions, error) {
	revs, err := podcontrol.ObserveRevisions(ctx, r.Client, r.OwnerIndexed, ud, gvk, labels.Everything(),
		revision.Input{Object: &ud.Spec.Template}, ud.Status.CollisionCount)
	if err != nil {
		return Snapshot{}, revs, err
	}
	update := revs.Decision.Update.Name
	s := Snapshot{UD: ud, Revision: update, Current: update, Now: r.Clock.Now(), Pods: map[string][]*corev1.Pod{}}
	if _, ok := revs.ByName[ud.Status.CurrentRevision]; ok {
		s.Current = ud.Status.CurrentRevision
	}
	if revs.Decision.CollisionCount != 0 || ud.Status.CollisionCount != nil {
		s.CollisionCount = &revs.Decision.CollisionCount
	}
	want := kindOf(ud)
	for _, k := range kinds {
		list := k.NewList()
		if err := reader.List(ctx, list, client.InNamespace(ud.Namespace)); err != nil {
			return Snapshot{}, revs, fmt.Errorf("list %ss: %w", k.Name(), err)
		}
		for _, o := range k.Items(list) {
			if !metav1.IsControlledBy(o, ud) {
				continue
			}
			o.GetObjectKind().SetGroupVersionKind(k.GVK())
			if k == want {
				s.Workloads = append(s.Workloads, o)
			} else {
				s.Strays = append(s.Strays, o)
			}
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(ud.Spec.Selector)
	if err != nil {
		return Snapshot{}, revs, reconcile.TerminalError(fmt.Errorf("spec.selector: %w", err)) // only a spec change mends it
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(ud.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return Snapshot{}, revs, fmt.Errorf("list pods: %w", err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if name, ok := pod.Labels[SubsetNameLabel]; ok {
			s.Pods[name] = append(s.Pods[name], pod)
		}
	}
	return s, revs, nil
}

// apply writes the plan's workloads: deletions, creations, updates. It returns the status to
// write: the plan's, with the failed step's condition False.
func (r *Reconciler) apply(ctx context.Context, ud *appsv1alpha1.UnitedDeployment, p Plan) (appsv1alpha1.UnitedDeploymentStatus, error) {
	st := p.Status
	for _, l := range p.PodLabels {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, ReservedLabel, l.Value)
		if err := r.Client.Patch(ctx, l.Pod, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil && !apierrors.IsNotFound(err) {
			return st, fmt.Errorf("label pod %s %s=%s: %w", l.Pod.Name, ReservedLabel, l.Value, err)
		}
	}
	var provisionErr error
	for _, d := range p.Deletes {
		if err := r.Client.Delete(ctx, d.Obj); err != nil && !apierrors.IsNotFound(err) {
			provisionErr = fmt.Errorf("delete %s %s: %w", d.Obj.GetObjectKind().GroupVersionKind().Kind, d.Obj.GetName(), err)
			break
		}
		r.event(ud, corev1.EventTypeNormal, "SuccessfulDeleteSubset", "deleted %s %s: %s", d.Obj.GetObjectKind().GroupVersionKind().Kind, d.Obj.GetName(), d.Why)
	}
	if provisionErr == nil {
		for _, c := range p.Creates {
			if err := r.Client.Create(ctx, c); err != nil {
				provisionErr = fmt.Errorf("create the workload of subset %s: %w", c.GetLabels()[SubsetNameLabel], err)
				break
			}
			r.event(ud, corev1.EventTypeNormal, "SuccessfulCreateSubset", "created %s %s for subset %s", kindOf(ud).Name(), c.GetName(), c.GetLabels()[SubsetNameLabel])
		}
	}
	if provisionErr != nil {
		r.event(ud, corev1.EventTypeWarning, "FailedProvisionSubset", "%v", provisionErr)
		return failed(st, SubsetProvisioned, provisionErr, r.Clock.Now()), provisionErr
	}
	for _, u := range p.Updates {
		if err := r.Client.Update(ctx, u.Obj); err != nil {
			err = fmt.Errorf("update %s %s (%s): %w", kindOf(ud).Name(), u.Obj.GetName(), u.Why, err)
			if !apierrors.IsConflict(err) {
				r.event(ud, corev1.EventTypeWarning, "FailedUpdateSubset", "%v", err)
			}
			return failed(st, SubsetUpdated, err, r.Clock.Now()), err
		}
		r.event(ud, corev1.EventTypeNormal, "SuccessfulUpdateSubset", "updated %s %s: %s", kindOf(ud).Name(), u.Obj.GetName(), u.Why)
	}
	return st, nil
}

// pruneRevisions deletes the revisions beyond spec.revisionHistoryLimit other than the current
// and update ones.
func (r *Reconciler) pruneRevisions(ctx context.Context, ud *appsv1alpha1.UnitedDeployment, revs podcontrol.Revisions, s Snapshot) {
	limit := int32(10)
	if ud.Spec.RevisionHistoryLimit != nil {
		limit = *ud.Spec.RevisionHistoryLimit
	}
	ctl := &podcontrol.Control{Client: r.Client, Recorder: r.Recorder}
	ctl.PruneRevisions(ctx, podcontrol.Owner{Object: ud, GVK: gvk}, revs.ByName, map[string]bool{s.Revision: true, s.Current: true}, limit)
}

// writeStatus writes st when it differs from ud's status.
func (r *Reconciler) writeStatus(ctx context.Context, ud *appsv1alpha1.UnitedDeployment, st appsv1alpha1.UnitedDeploymentStatus) error {
	if equality.Semantic.DeepEqual(ud.Status, st) {
		return nil
	}
	ctl := &podcontrol.Control{Client: r.Client}
	return ctl.WriteStatus(ctx, ud, st)
}

func (r *Reconciler) event(ud *appsv1alpha1.UnitedDeployment, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(ud, nil, typ, reason, reason, format, args...)
	}
}
