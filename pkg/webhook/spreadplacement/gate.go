package spreadplacement

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=kruise-workloadspread,verbs=get

// NewGate is the spread's admission side of the registration: before the API server stores a
// WorkloadSpread, its entries are added (namespace-wide and failing open while its workload is
// not found: a spread applied before its workload), and the spread is answered once the API
// server calls them, so that no pod created after the spread's create or update returned is
// created unplaced.
func NewGate(a registration.Admission, configuration string, source registration.Source, reader client.Reader,
	finder *workloadfinder.Finder, podWebhookPlaces func(string) bool) *registration.Gate[*appsv1alpha1.WorkloadSpread, admissionregistrationv1.MutatingWebhook] {
	return &registration.Gate[*appsv1alpha1.WorkloadSpread, admissionregistrationv1.MutatingWebhook]{
		Admission: a, Configuration: configuration, Source: source, Reader: reader, Kind: "WorkloadSpread",
		List: func() client.ObjectList { return &appsv1alpha1.WorkloadSpreadList{} },
		Key:  func(ws *appsv1alpha1.WorkloadSpread) string { return ws.Namespace + "/" + ws.Name },
		Entries: func(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, base admissionregistrationv1.WebhookClientConfig) ([]admissionregistrationv1.MutatingWebhook, error) {
			s, err := SpreadOf(ctx, finder, ws, podWebhookPlaces)
			if err != nil {
				return nil, err
			}
			return Entries([]Spread{s}, base, 0), nil
		},
	}
}
