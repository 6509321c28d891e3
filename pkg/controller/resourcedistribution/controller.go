package resourcedistribution

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/distributionrules"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=resourcedistributions,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=resourcedistributions/status,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=resourcedistributions/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=secrets;configmaps,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// nameIndex indexes the copies' metadata by name; resourceIndex the distributions by the kind and
// name of their resource (resourceKey).
const (
	nameIndex     = "metadata.name"
	resourceIndex = "spec.resource.kindAndName"
)

func resourceKey(kind, name string) string { return kind + "/" + name }

// Reconciler is the ResourceDistribution controller.
type Reconciler struct {
	// Client reads distributions, namespaces and the metadata of Secrets and ConfigMaps from the
	// cache, and writes; Live reads a copy's content (the manager caches no Secret's data).
	Client   client.Client
	Live     client.Reader
	Recorder events.EventRecorder
	Clock    clock.PassiveClock

	// verified holds, per distribution UID and namespace, "resourceVersion/hash" of the copy last
	// found up to date: it is not read again until it changes.
	verified sync.Map
}

// SetupWithManager runs the controller on the leader with workers workers.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Live == nil {
		r.Live = mgr.GetAPIReader()
	}
	b := ctrl.NewControllerManagedBy(mgr).Named("resourcedistribution-controller").
		For(&appsv1alpha1.ResourceDistribution{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.all)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers})
	if err := mgr.GetFieldIndexer().IndexField(ctx, &appsv1alpha1.ResourceDistribution{}, resourceIndex, func(o client.Object) []string {
		res, err := distributionrules.Decode(o.(*appsv1alpha1.ResourceDistribution).Spec.Resource.Raw)
		if err != nil {
			return nil
		}
		return []string{resourceKey(res.GetKind(), res.GetName())}
	}); err != nil {
		return err
	}
	for _, gvk := range distributionrules.Kinds {
		meta := metadataOf(gvk)
		if err := mgr.GetFieldIndexer().IndexField(ctx, meta, nameIndex, func(o client.Object) []string { return []string{o.GetName()} }); err != nil {
			return err
		}
		b = b.Watches(meta, handler.EnqueueRequestsFromMapFunc(r.distributionsOf(gvk)))
	}
	return b.Complete(r)
}

func metadataOf(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// all enqueues every distribution (a namespace came, went or changed its labels).
func (r *Reconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &appsv1alpha1.ResourceDistributionList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
	}
	return out
}

// distributionsOf maps an event of a Secret or ConfigMap to the distribution controlling it, or to
// the distributions of its kind and name (a conflicting object came or went).
func (r *Reconciler) distributionsOf(gvk schema.GroupVersionKind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == distributionrules.Kind.Kind && ref.APIVersion == distributionrules.Kind.GroupVersion().String() {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: ref.Name}}}
		}
		list := &appsv1alpha1.ResourceDistributionList{}
		if err := r.Client.List(ctx, list, client.MatchingFields{resourceIndex: resourceKey(gvk.Kind, o.GetName())}); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
		}
		return out
	}
}

// Reconcile copies the distribution's resource into its targets, removes its copies elsewhere and
// writes its status. Failures to read or write a copy are retried; conflicts and missing
// namespaces wait for their own events.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rd := &appsv1alpha1.ResourceDistribution{}
	if err := r.Client.Get(ctx, req.NamespacedName, rd); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if rd.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // the garbage collector removes the copies
	}
	res, err := distributionrules.Decode(rd.Spec.Resource.Raw)
	if err != nil {
		r.event(rd, corev1.EventTypeWarning, "InvalidResource", "spec.resource: %v", err)
		return ctrl.Result{}, nil
	}
	namespaces := &corev1.NamespaceList{}
	if err := r.Client.List(ctx, namespaces); err != nil {
		return ctrl.Result{}, err
	}
	targets, others, err := distributionrules.Targets(rd.Spec.Targets, namespaces.Items)
	if err != nil {
		r.event(rd, corev1.EventTypeWarning, "InvalidTargets", "%v", err)
		return ctrl.Result{}, nil
	}
	copies, err := r.copies(ctx, res)
	if err != nil {
		return ctrl.Result{}, err
	}
	byName := map[string]*corev1.Namespace{}
	for i := range namespaces.Items {
		byName[namespaces.Items[i].Name] = &namespaces.Items[i]
	}
	var failures []distributionrules.Failure
	succeeded := int32(0)
	for _, ns := range targets {
		f := r.distribute(ctx, rd, res, byName[ns], ns, copies[ns])
		if f == nil {
			succeeded++
			continue
		}
		failures = append(failures, *f)
	}
	for _, ns := range others {
		if m := copies[ns]; m != nil && distributionrules.ControlledBy(m, rd) {
			if f := r.remove(ctx, rd, m); f != nil {
				failures = append(failures, *f)
			}
		}
	}
	status := distributionrules.Status(rd, int32(len(targets)), succeeded, failures, r.Clock.Now())
	r.report(rd, status)
	if !equality.Semantic.DeepEqual(rd.Status, status) {
		cur := rd.DeepCopy()
		cur.Status = status
		if err := r.Client.Status().Update(ctx, cur); err != nil {
			return ctrl.Result{}, err
		}
	}
	var retry []error
	for _, f := range failures {
		if f.Type != appsv1alpha1.ResourceDistributionConflictOccurred && f.Type != appsv1alpha1.ResourceDistributionNamespaceNotExists {
			retry = append(retry, fmt.Errorf("%s in namespace %s: %s", f.Type, f.Namespace, f.Reason))
		}
	}
	return ctrl.Result{}, errors.Join(retry...)
}

// copies are the metadata of the objects of the resource's kind and name, by namespace.
func (r *Reconciler) copies(ctx context.Context, res *unstructured.Unstructured) (map[string]*metav1.PartialObjectMetadata, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(res.GroupVersionKind().GroupVersion().WithKind(res.GetKind() + "List"))
	if err := r.Client.List(ctx, list, client.MatchingFields{nameIndex: res.GetName()}); err != nil {
		return nil, err
	}
	out := make(map[string]*metav1.PartialObjectMetadata, len(list.Items))
	for i := range list.Items {
		list.Items[i].SetGroupVersionKind(res.GroupVersionKind())
		out[list.Items[i].Namespace] = &list.Items[i]
	}
	return out, nil
}

// distribute brings the copy in ns up to date; nil when it is, or the failure.
func (r *Reconciler) distribute(ctx context.Context, rd *appsv1alpha1.ResourceDistribution, res *unstructured.Unstructured,
	namespace *corev1.Namespace, ns string, have *metav1.PartialObjectMetadata) *distributionrules.Failure {
	fail := func(t appsv1alpha1.ResourceDistributionConditionType, err error) *distributionrules.Failure {
		return &distributionrules.Failure{Type: t, Namespace: ns, Reason: err.Error()}
	}
	if namespace == nil || namespace.DeletionTimestamp != nil {
		return fail(appsv1alpha1.ResourceDistributionNamespaceNotExists, errors.New("namespace not found or is terminating"))
	}
	var found metav1.Object = have
	if have == nil {
		want := distributionrules.Want(rd, res, ns, nil)
		err := r.Client.Create(ctx, want)
		if err == nil {
			r.verify(rd, ns, want)
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fail(appsv1alpha1.ResourceDistributionCreateResourceFailed, err)
		}
		found = nil // the cache has not shown it yet: read below
	} else if v, ok := r.verified.Load(string(rd.UID) + "/" + ns); ok && v == have.ResourceVersion+"/"+distributionrules.Hash(rd.Spec.Resource.Raw) {
		return nil
	}
	conflict := func() *distributionrules.Failure {
		return fail(appsv1alpha1.ResourceDistributionConflictOccurred,
			fmt.Errorf("a %s named %s that this ResourceDistribution does not control exists", res.GetKind(), res.GetName()))
	}
	if found != nil && !distributionrules.ControlledBy(found, rd) {
		return conflict()
	}
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(res.GroupVersionKind())
	if err := r.Live.Get(ctx, client.ObjectKey{Namespace: ns, Name: res.GetName()}, cur); err != nil {
		return fail(appsv1alpha1.ResourceDistributionGetResourceFailed, err)
	}
	if !distributionrules.ControlledBy(cur, rd) {
		return conflict()
	}
	if distributionrules.NeedsUpdate(cur, res) {
		want := distributionrules.Want(rd, res, ns, cur)
		if err := r.Client.Update(ctx, want); err != nil {
			return fail(appsv1alpha1.ResourceDistributionUpdateResourceFailed, err)
		}
		cur = want
	}
	r.verify(rd, ns, cur)
	return nil
}

// verify records that the copy obj, as written or read, is up to date.
func (r *Reconciler) verify(rd *appsv1alpha1.ResourceDistribution, ns string, obj metav1.Object) {
	r.verified.Store(string(rd.UID)+"/"+ns, obj.GetResourceVersion()+"/"+distributionrules.Hash(rd.Spec.Resource.Raw))
}

// remove deletes the distribution's copy from a namespace that is no longer a target.
func (r *Reconciler) remove(ctx context.Context, rd *appsv1alpha1.ResourceDistribution, m *metav1.PartialObjectMetadata) *distributionrules.Failure {
	err := r.Client.Delete(ctx, m, client.Preconditions{UID: &m.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return &distributionrules.Failure{Type: appsv1alpha1.ResourceDistributionDeleteResourceFailed, Namespace: m.Namespace, Reason: err.Error()}
	}
	r.verified.Delete(string(rd.UID) + "/" + m.Namespace)
	return nil
}

// report sends a Warning event for each condition that turns True, naming its namespaces.
func (r *Reconciler) report(rd *appsv1alpha1.ResourceDistribution, status appsv1alpha1.ResourceDistributionStatus) {
	was := map[appsv1alpha1.ResourceDistributionConditionType]string{}
	for _, c := range rd.Status.Conditions {
		was[c.Type] = strings.Join(c.FailedNamespaces, ",")
	}
	for _, c := range status.Conditions {
		if now := strings.Join(c.FailedNamespaces, ","); c.Status == corev1.ConditionTrue && now != was[c.Type] {
			r.event(rd, corev1.EventTypeWarning, string(c.Type), "namespaces %s: %s", now, c.Reason)
		}
	}
}

func (r *Reconciler) event(rd *appsv1alpha1.ResourceDistribution, eventType, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(rd, nil, eventType, reason, "Distribute", format, args...)
	}
}
