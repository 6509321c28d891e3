package topologypin

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/registrationmark"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=kruise-persistentpodstate-injection,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=persistentpodstates,verbs=list;watch;patch
// +kubebuilder:rbac:groups="",namespace=kruise-system,resources=configmaps,resourceNames=kruise-configuration,verbs=get

// Registrar keeps the entries of Configuration in line with the PersistentPodStates (Entries),
// keeping those their admissions added or need until it has seen those versions (NewGate,
// registration.Sync), and marks each with the state of its current generation's entry
// (registrationmark.Entries, with an event), from which the PersistentPodState controller writes
// the InjectionRegistered condition; their endpoint and CA bundle are copied from Source, which
// the certificate rotator keeps current.
type Registrar struct {
	registration.Target
	// ExcludedNamespaces never call the entries.
	ExcludedNamespaces []string
	// Config reads the custom workload whitelist from the kruise-configuration ConfigMap in
	// Namespace (the manager's) on every pass; nil lists no custom workload.
	Config client.Reader
}

// SetupWithManager runs the registrar on the leader.
func (r *Registrar) SetupWithManager(mgr ctrl.Manager) error {
	return r.generic().SetupWithManager(mgr, "persistentpodstate-injection", &v1alpha1.PersistentPodState{})
}

// Reconcile writes the entries when they differ from what is registered.
func (r *Registrar) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return r.generic().Reconcile(ctx, req)
}

// generic is the registrar for PersistentPodStates: their entries (Entries), with the custom
// workload whitelist read on every pass.
func (r *Registrar) generic() *registration.Registrar[admissionregistrationv1.MutatingWebhook] {
	return &registration.Registrar[admissionregistrationv1.MutatingWebhook]{Target: r.Target, Without: "no recorded topology is injected", Marker: r.marker(),
		List: func() client.ObjectList { return &v1alpha1.PersistentPodStateList{} },
		Entries: func(ctx context.Context, objs []client.Object, base admissionregistrationv1.WebhookClientConfig) ([]admissionregistrationv1.MutatingWebhook, map[string]string, error) {
			custom, err := workloadfinder.CustomWorkloads(ctx, r.Config, r.Namespace, workloadfinder.PersistentPodStateWhitelist)
			if err != nil {
				return nil, nil, fmt.Errorf("read the custom workload whitelist: %w", err)
			}
			states := make([]*v1alpha1.PersistentPodState, 0, len(objs))
			for _, o := range objs {
				states = append(states, o.(*v1alpha1.PersistentPodState))
			}
			want, skipped := Entries(states, EntryOptions{ClientConfig: base, ExcludedNamespaces: r.ExcludedNamespaces, CustomWorkloads: custom})
			return want, skipped, nil
		}}
}

// marker marks the PersistentPodStates and tells it in events.
func (r *Registrar) marker() registration.Marker {
	m := registration.Marker{Client: r.Client, Recorder: r.Recorder, Keys: registrationmark.Entries,
		Registered: "InjectionRegistered", NotRegistered: "InjectionNotRegistered"}
	m.Says.Registered = "generation %s is registered: the pods it keeps the state of get their recorded topology, or are refused while Kruise cannot be reached"
	m.Says.Lost = "generation %s is not registered: %s; the pods it keeps the state of are created without their recorded topology"
	m.Says.NoEntry = "generation %s injects no topology: %s"
	return m
}
