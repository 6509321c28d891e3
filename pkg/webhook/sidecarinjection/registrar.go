package sidecarinjection

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// Events of the registrar, on the SidecarSet.
const (
	ReasonRegistered    = "InjectionRegistered"
	ReasonNotRegistered = "InjectionNotRegistered"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=kruise-sidecarset-injection,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=sidecarsets,verbs=list;watch;patch

// Registrar keeps the injection entries of Configuration in line with the SidecarSets (Entries),
// taking over those the SidecarSets' admissions added (Gate), and marks each SidecarSet with the
// state of its current generation's entry (sidecarrules.RegisteredAnnotation once the API server
// has it, sidecarrules.NotRegisteredAnnotation while it has none, with an event), from which the
// SidecarSet controller writes the InjectionRegistered condition. Beside the admissions' pending
// entries, it is the only writer of Configuration's webhooks; their endpoint and CA bundle are
// copied from the pod webhook of Source, which the certificate rotator keeps current.
type Registrar struct {
	registration.Target
	// ExcludedNamespaces never call the entries.
	ExcludedNamespaces []string
}

// SetupWithManager runs the registrar on the leader.
func (r *Registrar) SetupWithManager(mgr ctrl.Manager) error {
	return r.generic().SetupWithManager(mgr, "sidecarset-injection", &v1beta1.SidecarSet{})
}

// Reconcile writes the entries when they differ from what is registered, and marks the
// SidecarSets whose registration the cache shows in place.
func (r *Registrar) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return r.generic().Reconcile(ctx, req)
}

// generic is the registrar for SidecarSets: their injection entries (Entries).
func (r *Registrar) generic() *registration.Registrar[admissionregistrationv1.MutatingWebhook] {
	return &registration.Registrar[admissionregistrationv1.MutatingWebhook]{Target: r.Target, Without: "no SidecarSet is injected", Marker: r.marker(),
		MarkDeleting: true,
		List:         func() client.ObjectList { return &v1beta1.SidecarSetList{} },
		Entries: func(_ context.Context, objs []client.Object, base admissionregistrationv1.WebhookClientConfig) ([]admissionregistrationv1.MutatingWebhook, map[string]string, error) {
			sets := make([]*v1beta1.SidecarSet, 0, len(objs))
			for _, o := range objs {
				sets = append(sets, o.(*v1beta1.SidecarSet))
			}
			want, skipped := Entries(sets, EntryOptions{ClientConfig: base, ExcludedNamespaces: r.ExcludedNamespaces})
			return want, skipped, nil
		}}
}

// marker marks the SidecarSets (sidecarrules.Marks) and tells it in events.
func (r *Registrar) marker() registration.Marker {
	m := registration.Marker{Client: r.Client, Recorder: r.Recorder, Keys: sidecarrules.Marks,
		Registered: ReasonRegistered, NotRegistered: ReasonNotRegistered}
	m.Says.Registered = "generation %s is registered: pods it selects get their sidecars, or are refused while Kruise cannot be reached"
	m.Says.Lost = "generation %s is not registered: %s; pods it selects are not sent to Kruise"
	m.Says.NoEntry = "generation %s injects no pod: %s"
	return m
}
