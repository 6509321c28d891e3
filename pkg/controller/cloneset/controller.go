package cloneset

import (
	"context"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
	"github.com/kruise-ng/kruise/pkg/platform/openkruisemetrics"
)

// The controller's permissions, generated into config/rbac.
// +kubebuilder:rbac:groups=apps.kruise.io,resources=clonesets,verbs=get;list;watch;patch
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
	workloadloop.Base
	Scheme *runtime.Scheme
	// PartitionRollback is the feature gate CloneSetPartitionRollback (Options.PartitionRollback).
	PartitionRollback bool
	// RecreateOnClaimChange is the feature gate RecreatePodWhenChangeVCTInCloneSetGate: a template
	// change made together with a volumeClaimTemplates change recreates pods instead of updating
	// them in place. Without it, claim templates apply to new pods only.
	RecreateOnClaimChange bool
	// PreparingUpdateAsUpdate is the feature gate PreparingUpdateAsUpdate (Options.PreparingUpdateAsUpdate).
	PreparingUpdateAsUpdate bool
	// ScalingExcludePreparingDelete is kruise-manager's --cloneset-scaling-exclude-preparing-delete
	// (Options.ScalingExcludePreparingDelete).
	ScalingExcludePreparingDelete bool

	// rolloutStarts holds when this manager saw each CloneSet's update revision change (key
	// namespace/name → time.Time), for the rollout duration metric.
	rolloutStarts sync.Map
}

// SetupWithManager registers the controller with workers parallel reconciles.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if err := r.Setup(mgr, inplace.Options{}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("cloneset-controller").
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

// Reconcile brings one CloneSet one step closer to its spec (pkg/machinery/workloadloop, with
// the CloneSet's kind).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sh := r.Shared("cloneset")
	sh.CacheLag = func(w client.Object) {
		cacheLagReads.Inc()
		openkruisemetrics.CloneSetExpectationLeaked(w.GetNamespace(), w.GetName()) // OpenKruise's name for it
	}
	return workloadloop.Reconcile(ctx, req, sh, kind{r}, &v1alpha1.CloneSet{})
}
