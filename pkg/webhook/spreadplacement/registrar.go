package spreadplacement

import (
	"context"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/registrationmark"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=kruise-workloadspread,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=workloadspreads,verbs=list;watch;patch

// Registrar keeps the entries of Configuration in line with the spreads (Entries), keeping those
// the spreads' admissions added or need until it has seen those versions (NewGate,
// registration.Sync), and marks each spread with the state of its current generation's entries
// (registrationmark.Entries, with an event), from which the spread controller writes the
// PlacementRegistered condition; their endpoint and CA bundle come from Source.
type Registrar struct {
	registration.Target
	Finder *workloadfinder.Finder
	// PodWebhookPlaces reports whether the Kruise pod webhook places the CloneSet pods of a
	// namespace (it is called for them and fails closed there); nil: it places none.
	PodWebhookPlaces func(namespace string) bool
}

// resync re-reads the targetRef workloads of kinds the registrar does not watch.
const resync = time.Minute

// SetupWithManager runs the registrar on the leader. A targetRef workload's creation or selector
// change is seen at once for the kinds watched here, within resync for the others.
func (r *Registrar) SetupWithManager(mgr ctrl.Manager) error {
	return r.generic().SetupWithManager(mgr, "workloadspread-registration", &appsv1alpha1.WorkloadSpread{}, workloadfinder.Watched()...)
}

// Reconcile writes the entries when they differ from what is registered.
func (r *Registrar) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return r.generic().Reconcile(ctx, req)
}

// generic is the registrar for spreads: the entries of every spread not being deleted, from its
// target workload (SpreadOf).
func (r *Registrar) generic() *registration.Registrar[admissionregistrationv1.MutatingWebhook] {
	return &registration.Registrar[admissionregistrationv1.MutatingWebhook]{Target: r.Target, Without: "no WorkloadSpread places pods", Marker: r.marker(),
		Resync: resync,
		List:   func() client.ObjectList { return &appsv1alpha1.WorkloadSpreadList{} },
		Entries: func(ctx context.Context, objs []client.Object, base admissionregistrationv1.WebhookClientConfig) ([]admissionregistrationv1.MutatingWebhook, map[string]string, error) {
			spreads := make([]Spread, 0, len(objs))
			for _, o := range objs {
				ws := o.(*appsv1alpha1.WorkloadSpread)
				if ws.DeletionTimestamp != nil {
					continue
				}
				s, err := SpreadOf(ctx, r.Finder, ws, r.PodWebhookPlaces)
				if err != nil {
					return nil, nil, fmt.Errorf("WorkloadSpread %s/%s: %w", ws.Namespace, ws.Name, err)
				}
				spreads = append(spreads, s)
			}
			return Entries(spreads, base, 0), nil, nil
		}}
}

// marker marks the spreads and tells it in events.
func (r *Registrar) marker() registration.Marker {
	m := registration.Marker{Client: r.Client, Recorder: r.Recorder, Keys: registrationmark.Entries,
		Registered: "PlacementRegistered", NotRegistered: "PlacementNotRegistered"}
	m.Says.Registered = "generation %s is registered: the pods it places are placed on creation, or refused while Kruise cannot be reached"
	m.Says.Lost = "generation %s is not registered: %s; the pods it places are created without being placed"
	return m
}

// SpreadOf is ws as its entries need it: the pods it places, from its target workload's selector
// and its targetFilter, or that the workload is not found; podWebhookPlaces says whether the pod
// webhook places the CloneSet pods of a namespace (nil: it places none).
func SpreadOf(ctx context.Context, finder *workloadfinder.Finder, ws *appsv1alpha1.WorkloadSpread, podWebhookPlaces func(string) bool) (Spread, error) {
	s := Spread{Namespace: ws.Namespace, Name: ws.Name}
	if podWebhookPlaces != nil && podWebhookPlaces(ws.Namespace) {
		s.PlacedByPodWebhook = appsv1alpha1.CloneSetInstanceIDLabelKey
	}
	w, err := workloadfinder.SpreadTarget(ctx, finder, ws)
	if err != nil {
		return s, err
	}
	if w == nil {
		s.TargetMissing = ws.Spec.TargetReference != nil
		return s, nil
	}
	var filter *metav1.LabelSelector
	if ws.Spec.TargetFilter != nil {
		filter = ws.Spec.TargetFilter.Selector
	}
	s.Pods = PodSelector(w.LabelSelector, filter)
	return s, nil
}
