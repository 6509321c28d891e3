package sidecarinjection

import (
	"context"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/tools/events"
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
	Client   client.Client
	Recorder events.EventRecorder
	// Configuration is the MutatingWebhookConfiguration of the entries (installed empty).
	Configuration string
	// Source is the webhook whose client config is copied.
	Source registration.Source
	// ExcludedNamespaces never call the entries.
	ExcludedNamespaces []string
	// Namespace is the manager's (the probe entry's).
	Namespace string
	// Live reads a SidecarSet from the API server when an entry its admission added has been
	// pending for long (registration.Sync.Live).
	Live client.Reader
}

// SetupWithManager runs the registrar on the leader.
func (r *Registrar) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("sidecarset-injection").
		Watches(&v1beta1.SidecarSet{}, registration.EnqueueOne).
		Watches(&admissionregistrationv1.MutatingWebhookConfiguration{}, registration.EnqueueOne,
			registration.Named(r.Configuration, r.Source.Configuration)).
		Complete(r)
}

// Reconcile writes the entries when they differ from what is registered, and marks the
// SidecarSets whose registration the cache shows in place.
func (r *Registrar) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	base, err := r.Source.ClientConfig(ctx, r.Client)
	if err != nil {
		return reconcile.Result{}, err
	}
	if base == nil { // the serving certificate is not there yet
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	list := &v1beta1.SidecarSetList{}
	if err := r.Client.List(ctx, list); err != nil {
		return reconcile.Result{}, err
	}
	sets := make([]*v1beta1.SidecarSet, 0, len(list.Items))
	seen := make(map[string]int64, len(list.Items))
	for i := range list.Items {
		sets = append(sets, &list.Items[i])
		seen[list.Items[i].Name] = list.Items[i].Generation
	}
	want, skipped := Entries(sets, EntryOptions{ClientConfig: *base, ExcludedNamespaces: r.ExcludedNamespaces})
	synced, err := registration.SyncMutating(ctx, r.Client, registration.Sync{Configuration: r.Configuration,
		Without: "no SidecarSet is injected", Probe: registration.ProbeEntry{ClientConfig: *base, Namespace: r.Namespace},
		Seen: seen, Live: registration.LiveGeneration(r.Live, func() client.ObjectList { return &v1beta1.SidecarSetList{} })}, want)
	objects := make([]client.Object, len(sets))
	for i := range sets {
		objects[i] = sets[i]
	}
	return r.marker().After(ctx, objects, synced, err, func(o client.Object) string { return skipped[o.GetName()] }, reconcile.Result{})
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
