package persistentpodstate

import (
	"context"
	"fmt"
	"maps"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/registrationmark"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=persistentpodstates,verbs=list;watch;create;update;delete
// +kubebuilder:rbac:groups=apps.kruise.io,resources=persistentpodstates/status,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=statefulsets,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=pods;nodes,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",namespace=kruise-system,resources=configmaps,resourceNames=kruise-configuration,verbs=get
// +kubebuilder:rbac:groups=*,resources=*/scale,verbs=get

// Events of the controllers, on the PersistentPodState (or, for generation, the workload).
const (
	ReasonStatesChanged     = "PodStatesChanged"
	ReasonUnsupportedTarget = "UnsupportedTarget"
	ReasonGenerated         = "PersistentPodStateGenerated"
	ReasonNotGenerated      = "PersistentPodStateNotGenerated"
)

// Group kinds a PersistentPodState may always target (custom workloads: Supported).
// Reconciler records the pod states of PersistentPodStates (PlanStates).
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Finder reads the targeted workload's selector, replicas and pods.
	Finder *workloadfinder.Finder
	// Config reads the custom workload whitelist from the kruise-configuration ConfigMap in
	// Namespace (the manager's); nil lists no custom workload.
	Config    client.Reader
	Namespace string
}

// SetupWithManager runs the controller on the leader with workers workers.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("persistentpodstate-controller").
		For(&v1alpha1.PersistentPodState{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.forPod), builder.WithPredicates(podChanges)).
		Watches(&appsv1.StatefulSet{}, handler.EnqueueRequestsFromMapFunc(r.forWorkload(workloadfinder.StatefulSetKind))).
		Watches(&v1beta1.StatefulSet{}, handler.EnqueueRequestsFromMapFunc(r.forWorkload(workloadfinder.KruiseStatefulSetKind))).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// podChanges passes the pod events that can change a state: readiness, node, annotations,
// deletion. A pod is never ready when created.
var podChanges = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := asPod(e.ObjectOld), asPod(e.ObjectNew)
		if o == nil || n == nil {
			return true
		}
		return podReady(o) != podReady(n) || o.Spec.NodeName != n.Spec.NodeName ||
			(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) || !maps.Equal(o.Annotations, n.Annotations)
	},
}

func asPod(o client.Object) *corev1.Pod {
	p, _ := o.(*corev1.Pod)
	return p
}

// forPod enqueues the PersistentPodStates that target the pod's controller.
func (r *Reconciler) forPod(ctx context.Context, o client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(o)
	if ref == nil {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil
	}
	return r.targeting(ctx, o.GetNamespace(), schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, ref.Name)
}

// forWorkload enqueues the PersistentPodStates that target a workload of gk.
func (r *Reconciler) forWorkload(gk schema.GroupKind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		return r.targeting(ctx, o.GetNamespace(), gk, o.GetName())
	}
}

// targeting lists the PersistentPodStates of namespace whose targetRef is gk's name (whether
// the kind is supported is Reconcile's matter: the whitelist may change).
func (r *Reconciler) targeting(ctx context.Context, namespace string, gk schema.GroupKind, name string) []reconcile.Request {
	list := &v1alpha1.PersistentPodStateList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		pps := &list.Items[i]
		if got, _ := workloadfinder.PodStateTarget(pps.Spec.TargetReference); got == gk && pps.Spec.TargetReference.Name == name {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pps.Namespace, Name: pps.Name}})
		}
	}
	return out
}

// Reconcile brings one PersistentPodState's recorded states up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pps := &v1alpha1.PersistentPodState{}
	if err := r.Client.Get(ctx, req.NamespacedName, pps); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pps.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	ok, custom, err := r.supported(ctx, pps)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("PersistentPodState %s: %w", req, err)
	}
	if !ok {
		ref := pps.Spec.TargetReference
		r.event(pps, corev1.EventTypeWarning, ReasonUnsupportedTarget,
			"targetRef %s %s %s is neither a StatefulSet (apps or apps.kruise.io) nor a kind of %s in ConfigMap %s/%s: nothing is recorded",
			ref.APIVersion, ref.Kind, ref.Name, workloadfinder.PersistentPodStateWhitelist, r.Namespace, workloadfinder.ConfigurationName)
		return ctrl.Result{}, nil // a spec matter: nothing to retry
	}
	snap, err := r.observe(ctx, pps, custom)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("observe PersistentPodState %s: %w", req, err)
	}
	plan := PlanStates(snap)
	plan.Status.Conditions = registrationmark.Entries.With(registrationmark.PersistentPodStateInjection, pps, pps.Status.Conditions, metav1.Now())
	if err := r.applyStatus(ctx, pps, plan); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{}, nil // the newer object's event brings it back
		}
		return ctrl.Result{}, fmt.Errorf("update the status of PersistentPodState %s: %w", req, err)
	}
	if len(plan.Waiting) > 0 {
		// Not time-based: the node will show in the cache; retry with backoff until it does.
		return ctrl.Result{}, fmt.Errorf("the nodes of pods %s are not in the cache yet", strings.Join(plan.Waiting, ", "))
	}
	return ctrl.Result{}, nil
}

// supported tells whether pps's target is run, and whether it is a custom workload (Supported).
// The whitelist is read only for a target that is no StatefulSet.
func (r *Reconciler) supported(ctx context.Context, pps *v1alpha1.PersistentPodState) (ok, custom bool, err error) {
	if _, ok := workloadfinder.PodStateTarget(pps.Spec.TargetReference); ok {
		return true, false, nil
	}
	whitelist, err := workloadfinder.CustomWorkloads(ctx, r.Config, r.Namespace, workloadfinder.PersistentPodStateWhitelist)
	if err != nil {
		return false, false, fmt.Errorf("read the custom workload whitelist: %w", err)
	}
	ok, custom = workloadfinder.PodStateSupported(pps.Spec.TargetReference, whitelist)
	return ok, custom, nil
}

func (r *Reconciler) event(obj *v1alpha1.PersistentPodState, typ, reason, msg string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, typ, reason, reason, msg, args...)
	}
}
