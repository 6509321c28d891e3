package budgetguard

import (
	"context"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
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
	registration.Target
	Finder *workloadfinder.Finder
}

// resync re-reads the budgets' targetRef workloads, whose selectors the entries copy.
const resync = time.Minute

// SetupWithManager runs the registrar on the leader; a target workload created with its budget
// narrows the entry at once.
func (r *Registrar) SetupWithManager(mgr ctrl.Manager) error {
	return r.generic().SetupWithManager(mgr, "podunavailablebudget-protection", &policyv1alpha1.PodUnavailableBudget{}, workloadfinder.Watched()...)
}

// Reconcile writes the entries when they differ from what is registered.
func (r *Registrar) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return r.generic().Reconcile(ctx, req)
}

// generic is the registrar for budgets: every budget's entries, from its pods (BudgetOf).
func (r *Registrar) generic() *registration.Registrar[admissionregistrationv1.ValidatingWebhook] {
	return &registration.Registrar[admissionregistrationv1.ValidatingWebhook]{Target: r.Target, Without: "no budget is enforced", Marker: r.marker(),
		MarkDeleting: true, Resync: resync,
		List: func() client.ObjectList { return &policyv1alpha1.PodUnavailableBudgetList{} },
		Entries: func(ctx context.Context, objs []client.Object, base admissionregistrationv1.WebhookClientConfig) ([]admissionregistrationv1.ValidatingWebhook, map[string]string, error) {
			budgets := make([]Budget, 0, len(objs))
			for _, o := range objs {
				b, err := BudgetOf(ctx, r.Finder, o.(*policyv1alpha1.PodUnavailableBudget))
				if err != nil {
					return nil, nil, err
				}
				budgets = append(budgets, b)
			}
			return Entries(budgets, base, 0), nil, nil
		}}
}

// marker marks the budgets and tells it in events.
func (r *Registrar) marker() registration.Marker {
	m := registration.Marker{Client: r.Client, Recorder: r.Recorder, Keys: registrationmark.Entries,
		Registered: "ProtectionRegistered", NotRegistered: "ProtectionNotRegistered"}
	m.Says.Registered = "generation %s is registered: disruptions of the pods it guards are held to it, or refused while Kruise cannot be reached"
	m.Says.Lost = "generation %s is not registered: %s; disruptions of the pods it guards are not held to it"
	return m
}
