package sidecarset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/registrationmark"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// The controller's permissions, generated into config/rbac.
// +kubebuilder:rbac:groups=apps.kruise.io,resources=sidecarsets,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=sidecarsets/status,verbs=patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=sidecarsets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=list;watch;create;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler runs SidecarSets: observe → revisions → status → plan (Compute) → apply. It is the
// only writer of their status and revisions, and of the sidecar containers, hash entries and
// SidecarSetUpgradable condition of their pods.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// APIReader reads the pods around the cache when the cache has not shown the controller's
	// writes within expectationTimeout. SetupWithManager defaults it to the manager's.
	APIReader client.Reader
	// Engine carries out the in-place upgrades (Engine.UpdateContainers).
	Engine engine.Engine
	// RevisionNamespace holds the SidecarSets' ControllerRevisions: the manager's namespace, as in
	// OpenKruise.
	RevisionNamespace string
	// ExcludedNamespaces are those whose pods the injection entries never send to Kruise: their
	// pods are not counted as not injected.
	ExcludedNamespaces []string

	expectations *podcontrol.Expectations
	status       podcontrol.StatusPacer
	notInjected  notInjected
}

// significant says a status change is written at once (podcontrol.StatusInterval): a new
// generation, revision or collision count, or a status that settles (every matched pod updated
// and ready); counters that move during a rollout or a scale-up wait.
func significant(old, new *v1beta1.SidecarSetStatus) bool {
	return old.ObservedGeneration != new.ObservedGeneration || old.LatestRevision != new.LatestRevision ||
		!equality.Semantic.DeepEqual(old.CollisionCount, new.CollisionCount) || conditionsChanged(old.Conditions, new.Conditions) ||
		(new.UpdatedReadyPods == new.MatchedPods && new.ReadyPods == new.MatchedPods)
}

// PodIndex indexes pods by the SidecarSets their injected-list annotation names.
const PodIndex = "sidecarset.injected"

// IndexPods registers PodIndex with the manager's cache.
func IndexPods(ctx context.Context, mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, PodIndex, func(o client.Object) []string {
		return injectedSets(o)
	})
}

func injectedSets(o client.Object) []string {
	v := o.GetAnnotations()[sidecarrules.InjectedListAnnotation]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// SetupWithManager runs the controller on the leader with workers workers.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Engine == nil {
		r.Engine = engine.New(r.Client, r.Clock, inplace.Options{})
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	r.expectations = podcontrol.NewExpectations()
	if err := IndexPods(ctx, mgr); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("sidecarset-controller").
		For(&v1beta1.SidecarSet{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			var out []reconcile.Request
			for _, name := range injectedSets(o) {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
			}
			return out
		}), builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return podChanged(e.ObjectOld.(*corev1.Pod), e.ObjectNew.(*corev1.Pod))
		}})).
		Watches(&corev1.Pod{}, r.enqueueNotInjected()).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// expectationTimeout is how long the controller waits for the cache to show its own writes before
// it checks them against the API server (Expectations.Pending).
const expectationTimeout = 30 * time.Second

// Reconcile brings one SidecarSet one step closer to its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	set := &v1beta1.SidecarSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		if apierrors.IsNotFound(err) {
			r.expectations.Forget(req.Name)
			r.status.Forget(req.Name)
			r.notInjected.forget(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	pc := &podcontrol.Control{Client: r.Client, Clock: r.Clock, Engine: r.Engine, Expectations: r.expectations, Recorder: r.Recorder}
	owner := podcontrol.Owner{Object: set}
	pods, err := r.observe(ctx, set)
	if err != nil {
		return ctrl.Result{}, err
	}
	latest, cc, err := r.syncRevisions(ctx, pc, owner, set, pods)
	if err != nil {
		return ctrl.Result{}, err
	}
	plan := Compute(set, pods, latest.Name, cc)
	missing, report, scanWait, err := r.countNotInjected(ctx, set, r.Clock.Now())
	if err != nil {
		return ctrl.Result{}, err
	}
	r.reportNotInjected(set, report)
	plan.Status.NotInjectedPods = missing
	plan.Status.Conditions = sidecarrules.Marks.With(registrationmark.SidecarSetInjection, set, set.Status.Conditions, metav1.NewTime(r.Clock.Now()))
	var statusWait time.Duration
	if !equality.Semantic.DeepEqual(set.Status, plan.Status) {
		now := r.Clock.Now()
		if statusWait = r.status.Wait(req.Name, significant(&set.Status, &plan.Status), now); statusWait == 0 {
			if err := pc.WriteStatus(ctx, set, plan.Status); err != nil {
				return ctrl.Result{}, err
			}
			r.status.Wrote(req.Name, now)
		}
	}
	set.Status = plan.Status // the plan's: the upgrades record the latest revision even before it is written
	cached := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		cached[podKey(p)] = p
	}
	wait, err := r.expectations.Pending(set.Name, cached, r.Clock.Now(), expectationTimeout, func() (map[string]*corev1.Pod, error) {
		return r.livePods(ctx, set)
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	if wait {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err := r.apply(ctx, pc, owner, set, plan); err != nil {
		if errors.Is(err, errWaitingForBudget) {
			return ctrl.Result{RequeueAfter: podcontrol.BudgetRetry}, nil // the budget frees as pods come back
		}
		return ctrl.Result{}, err
	}
	// The held-back counters are written then, if no event comes first; the pods without the
	// sidecars are counted again then.
	return ctrl.Result{RequeueAfter: minWait(statusWait, scanWait)}, nil
}

// podKey keys a pod of a SidecarSet, whose pods span namespaces.
func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// revisionsOf lists set's ControllerRevisions.
func (r *Reconciler) revisionsOf(ctx context.Context, set *v1beta1.SidecarSet) ([]*appsv1.ControllerRevision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := r.Client.List(ctx, list, client.InNamespace(r.RevisionNamespace),
		client.MatchingLabels{sidecarrules.RevisionOwnerLabel: set.Name}); err != nil {
		return nil, fmt.Errorf("list the revisions of SidecarSet %s: %w", set.Name, err)
	}
	out := make([]*appsv1.ControllerRevision, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// conditionsChanged says a condition's status or reason differs.
func conditionsChanged(old, new []metav1.Condition) bool {
	if len(old) != len(new) {
		return true
	}
	for _, c := range new {
		o := meta.FindStatusCondition(old, c.Type)
		if o == nil || o.Status != c.Status || o.Reason != c.Reason || o.ObservedGeneration != c.ObservedGeneration {
			return true
		}
	}
	return false
}

// minWait is the sooner of two requeue delays, 0 meaning none.
func minWait(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}
