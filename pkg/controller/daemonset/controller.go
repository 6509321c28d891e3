package daemonset

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"
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
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/rolloutmetrics"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// The controller's permissions, generated into config/rbac.
// +kubebuilder:rbac:groups=apps.kruise.io,resources=daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=daemonsets/status,verbs=patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=daemonsets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;create;delete;patch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=list;watch;create;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler runs Advanced DaemonSets: observe → plan → apply → status. It is the only writer of
// the pods, revisions and status of the sets it manages.
type Reconciler struct {
	workloadloop.Base
	// KeepUnselected keeps an updated pod on a node taken out of rollingUpdate.selector, as
	// OpenKruise does, instead of moving it back to the current revision (Snapshot.CurrentRevision).
	KeepUnselected bool

	// backoff spaces the replacements of a node's failed pods (1 s doubling to 15 min, as the
	// DaemonSet controller's).
	backoff *flowcontrol.Backoff
}

// SetupWithManager registers the controller with workers parallel reconciles.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	r.defaults() // before the workers start: they share the backoff
	if err := r.Setup(mgr, engineOptions); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("daemonset-controller").
		For(&v1beta1.DaemonSet{}).
		Watches(&corev1.Pod{}, podcontrol.ToController(gvk.GroupKind())).
		Owns(&appsv1.ControllerRevision{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.orphanOwners), builder.WithPredicates(podcontrol.OrphanPods)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.allSets), builder.WithPredicates(nodeChanges)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// defaults fills what a Reconciler built for tests or the manager leaves unset.
func (r *Reconciler) defaults() {
	r.Defaults(engineOptions)
	if r.backoff == nil {
		r.backoff = flowcontrol.NewBackOff(time.Second, 15*time.Minute)
	}
}

// engineOptions label pods with the revision's hash, as DaemonSet pods are labelled.
var engineOptions = inplace.Options{ShortRevisionHash: true}

// nodeChanges passes node creations and deletions, and updates that can change where daemon pods
// run (nodeeligibility.Relevant): a node whose taint is removed gets its pod.
var nodeChanges = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldNode, ok1 := e.ObjectOld.(*corev1.Node)
		newNode, ok2 := e.ObjectNew.(*corev1.Node)
		return ok1 && ok2 && nodeeligibility.Relevant(oldNode, newNode)
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// Reconcile brings one Advanced DaemonSet one step closer to its spec (pkg/machinery/workloadloop,
// with the set's kind).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.defaults()
	return workloadloop.Reconcile(ctx, req, r.Shared("daemonset"), kind{r}, &v1beta1.DaemonSet{})
}

// reportMetrics sets the set's rollout gauges from the status just computed and, when this status
// ends a rollout (every desired node runs the update revision, available), records how long it
// took since the update revision was created.
func (r *Reconciler) reportMetrics(ds *v1beta1.DaemonSet, obs *observation, st v1beta1.DaemonSetStatus, now time.Time) {
	want := st.DesiredNumberScheduled
	w := workload(ds.Namespace, ds.Name)
	w.Set(rolloutmetrics.Counts{Replicas: want, Ready: st.NumberReady, Updated: st.UpdatedNumberScheduled,
		UpdatedReady: min(st.UpdatedNumberScheduled, st.NumberReady), Unavailable: st.NumberUnavailable})
	done := func(s *v1beta1.DaemonSetStatus) bool {
		return s.UpdatedNumberScheduled == s.DesiredNumberScheduled && s.NumberAvailable == s.DesiredNumberScheduled
	}
	if ds.Status.UpdateRevision == st.UpdateRevision && !done(&ds.Status) && done(&st) && ds.Status.ObservedGeneration == st.ObservedGeneration {
		w.RolloutDone(now.Sub(obs.updateRevision.CreationTimestamp.Time))
	}
}

// allSets are every Advanced DaemonSet: a node change may concern each.
func (r *Reconciler) allSets(ctx context.Context, _ client.Object) []reconcile.Request {
	var list v1beta1.DaemonSetList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// orphanOwners are the sets of the pod's namespace whose selector matches it.
func (r *Reconciler) orphanOwners(ctx context.Context, o client.Object) []reconcile.Request {
	return podcontrol.Selecting(ctx, r.Client, o, &v1beta1.DaemonSetList{}, selectorOf, func(_, pod client.Object) bool {
		p, ok := pod.(*corev1.Pod)
		return ok && nodeeligibility.TargetNode(p) != ""
	})
}

func selectorOf(w client.Object) *metav1.LabelSelector { return w.(*v1beta1.DaemonSet).Spec.Selector }
