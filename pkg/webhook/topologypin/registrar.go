package topologypin

import (
	"context"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/tools/events"
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
	Client   client.Client
	Recorder events.EventRecorder
	// Configuration is the MutatingWebhookConfiguration of the entries (installed empty).
	Configuration string
	Source        registration.Source
	// ExcludedNamespaces never call the entries.
	ExcludedNamespaces []string
	// Config reads the custom workload whitelist from the kruise-configuration ConfigMap in
	// Namespace (the manager's) on every pass; nil lists no custom workload.
	Config    client.Reader
	Namespace string
	// Live reads a PersistentPodState from the API server when an entry its admission added has
	// been pending for long (registration.Sync.Live).
	Live client.Reader
}

// SetupWithManager runs the registrar on the leader.
func (r *Registrar) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("persistentpodstate-injection").
		Watches(&v1alpha1.PersistentPodState{}, registration.EnqueueOne).
		Watches(&admissionregistrationv1.MutatingWebhookConfiguration{}, registration.EnqueueOne,
			registration.Named(r.Configuration, r.Source.Configuration)).
		Complete(r)
}

// Reconcile writes the entries when they differ from what is registered.
func (r *Registrar) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	base, err := r.Source.ClientConfig(ctx, r.Client)
	if err != nil {
		return reconcile.Result{}, err
	}
	if base == nil { // the serving certificate is not there yet
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	list := &v1alpha1.PersistentPodStateList{}
	if err := r.Client.List(ctx, list); err != nil {
		return reconcile.Result{}, err
	}
	states := make([]*v1alpha1.PersistentPodState, 0, len(list.Items))
	objects := make([]client.Object, 0, len(list.Items))
	seen := make(map[string]int64, len(list.Items))
	for i := range list.Items {
		pps := &list.Items[i]
		states = append(states, pps)
		seen[pps.Namespace+"/"+pps.Name] = pps.Generation
		if pps.DeletionTimestamp == nil {
			objects = append(objects, pps)
		}
	}
	custom, err := workloadfinder.CustomWorkloads(ctx, r.Config, r.Namespace, workloadfinder.PersistentPodStateWhitelist)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("read the custom workload whitelist: %w", err)
	}
	want, skipped := Entries(states, EntryOptions{ClientConfig: *base, ExcludedNamespaces: r.ExcludedNamespaces, CustomWorkloads: custom})
	synced, err := registration.SyncMutating(ctx, r.Client, registration.Sync{Configuration: r.Configuration, Without: "no recorded topology is injected",
		Probe: registration.ProbeEntry{ClientConfig: *base, Namespace: r.Namespace},
		Seen:  seen,
		Live:  registration.LiveGeneration(r.Live, func() client.ObjectList { return &v1alpha1.PersistentPodStateList{} })}, want)
	return r.marker().After(ctx, objects, synced, err, func(o client.Object) string {
		return skipped[o.GetNamespace()+"/"+o.GetName()]
	}, reconcile.Result{})
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
