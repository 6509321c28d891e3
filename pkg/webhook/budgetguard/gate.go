package budgetguard

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=kruise-podunavailablebudget-protection,verbs=get

// NewGate is the budget's admission side of the registration: before the API server stores a
// budget, its entries (its pods' deletions, updates and resizes; its namespace's evictions) are
// added, and the budget is answered once the API server calls them, so that no disruption made
// after the budget's create or update returned passes by Kruise.
func NewGate(a registration.Admission, configuration string, source registration.Source, reader client.Reader, finder *workloadfinder.Finder) *registration.Gate[*policyv1alpha1.PodUnavailableBudget, admissionregistrationv1.ValidatingWebhook] {
	return &registration.Gate[*policyv1alpha1.PodUnavailableBudget, admissionregistrationv1.ValidatingWebhook]{
		Admission: a, Configuration: configuration, Source: source, Reader: reader, Kind: "PodUnavailableBudget",
		List: func() client.ObjectList { return &policyv1alpha1.PodUnavailableBudgetList{} },
		Key:  func(p *policyv1alpha1.PodUnavailableBudget) string { return p.Namespace + "/" + p.Name },
		Entries: func(ctx context.Context, pub *policyv1alpha1.PodUnavailableBudget, base admissionregistrationv1.WebhookClientConfig) ([]admissionregistrationv1.ValidatingWebhook, error) {
			b, err := BudgetOf(ctx, finder, pub)
			if err != nil {
				return nil, err
			}
			return Entries([]Budget{b}, base, 0), nil
		},
	}
}
