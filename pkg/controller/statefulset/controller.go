package statefulset

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/rolloutmetrics"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// The controller's permissions, generated into config/rbac.
// +kubebuilder:rbac:groups=apps.kruise.io,resources=statefulsets,verbs=get;list;watch
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
	workloadloop.Base
	// AutoDeletePVC is the feature gate StatefulSetAutoDeletePVC: persistentVolumeClaimRetentionPolicy
	// is honoured.
	AutoDeletePVC bool
	// StartOrdinal is the feature gate StatefulSetStartOrdinal: ordinals.start is honoured (else
	// ordinals start at 0).
	StartOrdinal bool
	// PodIndexLabel is the feature gate PodIndexLabel: pods carry apps.kubernetes.io/pod-index.
	PodIndexLabel bool
}

// SetupWithManager registers the controller with workers parallel reconciles.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if err := r.Setup(mgr, inplace.Options{}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("statefulset-controller").
		For(&v1beta1.StatefulSet{}).
		Watches(&corev1.Pod{}, podcontrol.ToController(gvk.GroupKind())).
		Owns(&appsv1.ControllerRevision{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.orphanOwners), builder.WithPredicates(podcontrol.OrphanPods)).
		Watches(&corev1.PersistentVolumeClaim{}, handler.EnqueueRequestsFromMapFunc(r.claimOwner)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// Reconcile brings one Advanced StatefulSet one step closer to its spec (pkg/machinery/workloadloop,
// with the set's kind).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return workloadloop.Reconcile(ctx, req, r.Shared("statefulset"), kind{r}, &v1beta1.StatefulSet{})
}

// reportProgress records a Warning event when the Progressing condition turns to
// ProgressDeadlineExceeded, so that a stuck rollout is visible in `kubectl describe`.
func (r *Reconciler) reportProgress(set *v1beta1.StatefulSet, next *v1beta1.StatefulSetStatus) {
	if progressReason(next.Conditions) == ReasonProgressDeadlineExceeded && progressReason(set.Status.Conditions) != ReasonProgressDeadlineExceeded {
		r.Control().Event(r.owner(set), corev1.EventTypeWarning, ReasonProgressDeadlineExceeded,
			"revision %s not rolled out within %s: %d of %d pods updated, %d updated and ready",
			next.UpdateRevision, progressDeadline(set.Annotations), next.UpdatedReplicas, next.Replicas, next.UpdatedReadyReplicas)
	}
}

// progressReason is the reason of the Progressing condition ("" without one).
func progressReason(conds []v1beta1.StatefulSetCondition) string {
	if c := findCondition(conds, ConditionProgressing); c != nil {
		return c.Reason
	}
	return ""
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
		UpdatedReady: st.UpdatedReadyReplicas, Unavailable: max(want-st.AvailableReplicas, 0),
		Stuck: progressReason(st.Conditions) == ReasonProgressDeadlineExceeded})
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
