package podunavailablebudget

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/podbudget"
	"github.com/kruise-ng/kruise/pkg/core/registrationmark"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
)

// +kubebuilder:rbac:groups=policy.kruise.io,resources=podunavailablebudgets,verbs=list;watch
// +kubebuilder:rbac:groups=policy.kruise.io,resources=podunavailablebudgets/status,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// The workload finder's (pkg/machinery/workloadfinder):
// +kubebuilder:rbac:groups=apps,resources=deployments;replicasets;statefulsets,verbs=list;watch
// +kubebuilder:rbac:groups=*,resources=*/scale,verbs=get

// Reconciler runs PodUnavailableBudgets.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	Finder   *workloadfinder.Finder
}

// SetupWithManager runs the controller on the leader with workers workers.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	inNamespace := handler.EnqueueRequestsFromMapFunc(r.budgetsIn)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("podunavailablebudget-controller").
		For(&policyv1alpha1.PodUnavailableBudget{}).
		// A pod's readiness moves the counts; a workload's replicas move what the budget counts on
		// (a scale-in then never runs into the budget).
		Watches(&corev1.Pod{}, inNamespace).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers})
	for _, w := range workloadfinder.ReplicaWorkloads() {
		b = b.Watches(w, inNamespace)
	}
	return b.Complete(r)
}

// budgetsIn enqueues the budgets of an object's namespace.
func (r *Reconciler) budgetsIn(ctx context.Context, o client.Object) []reconcile.Request {
	list := &policyv1alpha1.PodUnavailableBudgetList{}
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

// Reconcile brings one budget's status up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pub := &policyv1alpha1.PodUnavailableBudget{}
	if err := r.Client.Get(ctx, req.NamespacedName, pub); err != nil {
		if apierrors.IsNotFound(err) {
			forgetMetrics(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pub.DeletionTimestamp != nil {
		forgetMetrics(req.Namespace, req.Name)
		return ctrl.Result{}, nil
	}
	pods, replicas, err := r.pods(ctx, pub)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(pods) == 0 {
		r.event(pub, corev1.EventTypeNormal, "NoPods", "no pod is guarded: no alive pod matches")
	}
	if err := r.markPods(ctx, pub, pods); err != nil {
		return ctrl.Result{}, err
	}
	expected := podbudget.Expected(pub, replicas)
	desired, err := podbudget.DesiredAvailable(&pub.Spec, expected)
	if err != nil {
		r.event(pub, corev1.EventTypeWarning, "CalculateExpectedPodCountFailed", "%v", err)
		return ctrl.Result{}, nil // invalid spec: the validating webhook names the field; nothing to retry
	}
	status, recheck := podbudget.Status(pub, pods, expected, desired, r.Clock.Now())
	status.Conditions = registrationmark.Entries.With(registrationmark.BudgetProtection, pub, pub.Status.Conditions, metav1.NewTime(r.Clock.Now()))
	reportMetrics(pub, &status)
	if !equality.Semantic.DeepEqual(normalize(pub.Status), normalize(status)) {
		pub = pub.DeepCopy()
		pub.Status = status
		if err := r.Client.Status().Update(ctx, pub); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil // the webhook recorded a disruption meanwhile
			}
			return ctrl.Result{}, fmt.Errorf("update the status: %w", err)
		}
	}
	if !recheck.IsZero() {
		return ctrl.Result{RequeueAfter: max(recheck.Sub(r.Clock.Now()), time.Second)}, nil
	}
	return ctrl.Result{}, nil
}

// normalize makes empty maps and absent ones compare equal.
func normalize(s policyv1alpha1.PodUnavailableBudgetStatus) policyv1alpha1.PodUnavailableBudgetStatus {
	if len(s.DisruptedPods) == 0 {
		s.DisruptedPods = nil
	}
	if len(s.UnavailablePods) == 0 {
		s.UnavailablePods = nil
	}
	return s
}

// pods returns the alive pods pub guards and its workloads' replicas.
func (r *Reconciler) pods(ctx context.Context, pub *policyv1alpha1.PodUnavailableBudget) ([]*corev1.Pod, int32, error) {
	if ref := pub.Spec.TargetReference; ref != nil {
		w, err := r.Finder.Find(ctx, pub.Namespace, workloadfinder.Ref{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name})
		if err != nil || w == nil {
			return nil, 0, err
		}
		pods, err := r.Finder.Pods(ctx, pub.Namespace, w)
		return pods, w.Replicas, err
	}
	if pub.Spec.Selector == nil {
		return nil, 0, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(pub.Spec.Selector)
	if err != nil || selector.Empty() {
		return nil, 0, nil
	}
	list := &corev1.PodList{}
	if err := r.Client.List(ctx, list, client.InNamespace(pub.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, 0, err
	}
	var pods []*corev1.Pod
	for i := range list.Items {
		if workloadfinder.Active(&list.Items[i]) {
			pods = append(pods, &list.Items[i])
		}
	}
	replicas, err := r.Finder.ReplicasOf(ctx, pods)
	return pods, replicas, err
}

// markPods writes the related-pub annotation on the guarded pods that lack it.
func (r *Reconciler) markPods(ctx context.Context, pub *policyv1alpha1.PodUnavailableBudget, pods []*corev1.Pod) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, policyv1alpha1.PodRelatedPubAnnotation, pub.Name)
	for _, p := range pods {
		if p.Annotations[policyv1alpha1.PodRelatedPubAnnotation] != "" {
			continue
		}
		if err := r.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("annotate pod %s: %w", p.Name, err)
		}
	}
	return nil
}

func (r *Reconciler) event(pub *policyv1alpha1.PodUnavailableBudget, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(pub, nil, typ, reason, reason, format, args...)
	}
}
