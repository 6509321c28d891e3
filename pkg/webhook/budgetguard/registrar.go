package budgetguard

import (
	"context"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/registrationmark"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=kruise-podunavailablebudget-protection,verbs=update
// +kubebuilder:rbac:groups=policy.kruise.io,resources=podunavailablebudgets,verbs=list;watch;patch

// Registrar keeps the entries of Configuration in line with the budgets (Entries), keeping those
// the budgets' admissions added or need until it has seen those versions (NewGate,
// registration.Sync), and marks each budget with the state of its current generation's entries
// (registrationmark.Entries, with an event), from which the budget controller writes the
// ProtectionRegistered condition; their endpoint and CA bundle come from Source.
type Registrar struct {
	Client   client.Client
	Recorder events.EventRecorder
	Finder   *workloadfinder.Finder
	// Configuration is the ValidatingWebhookConfiguration of the entries (installed empty).
	Configuration string
	Source        registration.Source
	// Namespace is the manager's (the probe entry's).
	Namespace string
	// Live reads a budget from the API server when an entry its admission added has been pending
	// for long (registration.Sync.Live).
	Live client.Reader
}

// resync re-reads the budgets' targetRef workloads, whose selectors the entries copy.
const resync = time.Minute

// SetupWithManager runs the registrar on the leader.
func (r *Registrar) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("podunavailablebudget-protection").
		Watches(&policyv1alpha1.PodUnavailableBudget{}, registration.EnqueueOne).
		Watches(&admissionregistrationv1.ValidatingWebhookConfiguration{}, registration.EnqueueOne, registration.Named(r.Configuration)).
		Watches(&admissionregistrationv1.MutatingWebhookConfiguration{}, registration.EnqueueOne, registration.Named(r.Source.Configuration))
	for _, w := range workloadfinder.Watched() {
		b = b.Watches(w, registration.EnqueueOne) // a target workload created with its budget narrows the entry at once
	}
	return b.Complete(r)
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
	list := &policyv1alpha1.PodUnavailableBudgetList{}
	if err := r.Client.List(ctx, list); err != nil {
		return reconcile.Result{}, err
	}
	budgets := make([]Budget, 0, len(list.Items))
	objects := make([]client.Object, 0, len(list.Items))
	seen := make(map[string]int64, len(list.Items))
	for i := range list.Items {
		pub := &list.Items[i]
		objects = append(objects, pub)
		seen[pub.Namespace+"/"+pub.Name] = pub.Generation
		b, err := BudgetOf(ctx, r.Finder, pub)
		if err != nil {
			return reconcile.Result{}, err
		}
		budgets = append(budgets, b)
	}
	want := Entries(budgets, *base, 0)
	synced, err := registration.SyncValidating(ctx, r.Client, registration.Sync{Configuration: r.Configuration, Without: "no budget is enforced",
		Probe: registration.ProbeEntry{ClientConfig: *base, Namespace: r.Namespace},
		Seen:  seen,
		Live:  registration.LiveGeneration(r.Live, func() client.ObjectList { return &policyv1alpha1.PodUnavailableBudgetList{} })}, want)
	return r.marker().After(ctx, objects, synced, err, nil, reconcile.Result{RequeueAfter: resync})
}

// marker marks the budgets and tells it in events.
func (r *Registrar) marker() registration.Marker {
	m := registration.Marker{Client: r.Client, Recorder: r.Recorder, Keys: registrationmark.Entries,
		Registered: "ProtectionRegistered", NotRegistered: "ProtectionNotRegistered"}
	m.Says.Registered = "generation %s is registered: disruptions of the pods it guards are held to it, or refused while Kruise cannot be reached"
	m.Says.Lost = "generation %s is not registered: %s; disruptions of the pods it guards are not held to it"
	return m
}
