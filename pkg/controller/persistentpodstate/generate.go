package persistentpodstate

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
)

// Generator keeps the PersistentPodStates that StatefulSets of one kind ask for by annotation
// (PlanGenerated). Run one per kind (NewGenerators).
type Generator struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Kind is the workloads' group kind; APIVersion is written in the generated objects' targetRef
	// and owner reference (apps/v1, or apps.kruise.io/v1beta1 as OpenKruise writes).
	Kind       schema.GroupKind
	APIVersion string
}

// NewGenerators are the generators of StatefulSets and Advanced StatefulSets.
func NewGenerators(c client.Client, recorder events.EventRecorder) []*Generator {
	return []*Generator{
		{Client: c, Recorder: recorder, Kind: workloadfinder.StatefulSetKind, APIVersion: appsv1.SchemeGroupVersion.String()},
		{Client: c, Recorder: recorder, Kind: workloadfinder.KruiseStatefulSetKind, APIVersion: v1beta1.GroupVersion.String()},
	}
}

// newWorkload is an empty object of the generator's kind.
func (g *Generator) newWorkload() client.Object {
	if g.Kind == workloadfinder.StatefulSetKind {
		return &appsv1.StatefulSet{}
	}
	return &v1beta1.StatefulSet{}
}

// SetupWithManager runs the generator on the leader.
func (g *Generator) SetupWithManager(mgr ctrl.Manager, workers int) error {
	name := "persistentpodstate-generator-statefulset"
	if g.Kind == workloadfinder.KruiseStatefulSetKind {
		name = "persistentpodstate-generator-advancedstatefulset"
	}
	return ctrl.NewControllerManagedBy(mgr).Named(name).
		// As OpenKruise, the generated object is rewritten when the workload is seen (created, or
		// listed at start) and when one of the annotations that ask for it changes, and at no other
		// time: a user's change of it (a retention policy, say) stays until then.
		For(g.newWorkload(), builder.WithPredicates(predicate.Funcs{UpdateFunc: generationAsked})).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(g)
}

// generationAsked reports whether an update of a workload changes the annotations OpenKruise's
// generator reacts to (kruise.io/persistent-pod-annotations alone is not one of them).
func generationAsked(e event.UpdateEvent) bool {
	for _, k := range []string{AutoGenerateAnnotation, RequiredTopologyAnnotation, PreferredTopologyAnnotation} {
		if e.ObjectOld.GetAnnotations()[k] != e.ObjectNew.GetAnnotations()[k] {
			return true
		}
	}
	return false
}

// Reconcile brings the PersistentPodState one workload's annotations ask for in line with them.
func (g *Generator) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := g.newWorkload()
	if err := g.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err) // what it owned goes with garbage collection
	}
	existing := &v1alpha1.PersistentPodState{}
	if err := g.Client.Get(ctx, req.NamespacedName, existing); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		existing = nil
	}
	w := Workload{APIVersion: g.APIVersion, Kind: g.Kind.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(),
		UID: obj.GetUID(), Annotations: obj.GetAnnotations(), Deleting: obj.GetDeletionTimestamp() != nil}
	dec := PlanGenerated(w, existing)
	if err := g.applyGeneration(ctx, obj, dec); err != nil {
		return ctrl.Result{}, fmt.Errorf("%s %s: %w", g.Kind.Kind, req, err)
	}
	return ctrl.Result{}, nil
}

func (g *Generator) event(obj client.Object, typ, reason, msg string, args ...any) {
	if g.Recorder != nil {
		g.Recorder.Eventf(obj, nil, typ, reason, reason, msg, args...)
	}
}

// SetupWithManager runs the Reconciler and both Generators on the leader, with workers workers
// each, their events recorded as persistentpodstate-controller; the custom workload whitelist is
// read live from the kruise-configuration ConfigMap in namespace (the manager's).
func SetupWithManager(mgr ctrl.Manager, finder *workloadfinder.Finder, workers int, namespace string) error {
	recorder := mgr.GetEventRecorder("persistentpodstate-controller")
	r := &Reconciler{Client: mgr.GetClient(), Recorder: recorder, Finder: finder, Config: mgr.GetAPIReader(), Namespace: namespace}
	if err := r.SetupWithManager(mgr, workers); err != nil {
		return err
	}
	for _, g := range NewGenerators(mgr.GetClient(), recorder) {
		if err := g.SetupWithManager(mgr, workers); err != nil {
			return err
		}
	}
	return nil
}
