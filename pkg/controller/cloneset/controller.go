package cloneset

import (
	"context"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
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
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
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
	// the cache has not shown within workloadloop.ExpectationTimeout (Expectations.Pending). SetupWithManager
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

	loop workloadloop.State
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

// Reconcile brings one CloneSet one step closer to its spec (pkg/machinery/workloadloop, with
// the CloneSet's kind).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sh := workloadloop.Shared{Client: r.Client, Recorder: r.Recorder, Clock: r.Clock, Expectations: r.Expectations,
		Control: r.control(), State: &r.loop, Name: "cloneset", PreDownload: r.PreDownload, CacheLagReads: cacheLagReads}
	return workloadloop.Reconcile(ctx, req, sh, kind{r}, &v1alpha1.CloneSet{})
}
