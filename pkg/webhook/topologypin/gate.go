package topologypin

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=kruise-persistentpodstate-injection,verbs=get

// GateOptions are what the PersistentPodState's gate reads besides the object.
type GateOptions struct {
	Admission     registration.Admission
	Configuration string
	Source        registration.Source
	// Reader reads Source (normally the cache); Config reads the custom workload whitelist from
	// the kruise-configuration ConfigMap in Namespace (the manager's).
	Reader, Config     client.Reader
	Namespace          string
	ExcludedNamespaces []string
}

// NewGate is the PersistentPodState's admission side of the registration: before the API server
// stores one, its entry is added, and it is answered once the API server calls the entry, so that
// no pod its workload creates after that is created without its recorded topology.
func NewGate(o GateOptions) *registration.Gate[*v1alpha1.PersistentPodState, admissionregistrationv1.MutatingWebhook] {
	return &registration.Gate[*v1alpha1.PersistentPodState, admissionregistrationv1.MutatingWebhook]{
		Admission: o.Admission, Configuration: o.Configuration, Source: o.Source, Reader: o.Reader, Kind: "PersistentPodState",
		List: func() client.ObjectList { return &v1alpha1.PersistentPodStateList{} },
		Key:  func(p *v1alpha1.PersistentPodState) string { return p.Namespace + "/" + p.Name },
		Entries: func(ctx context.Context, pps *v1alpha1.PersistentPodState, base admissionregistrationv1.WebhookClientConfig) ([]admissionregistrationv1.MutatingWebhook, error) {
			custom, err := workloadfinder.CustomWorkloads(ctx, o.Config, o.Namespace, workloadfinder.PersistentPodStateWhitelist)
			if err != nil {
				return nil, fmt.Errorf("read the custom workload whitelist: %w", err)
			}
			want, _ := Entries([]*v1alpha1.PersistentPodState{pps}, EntryOptions{ClientConfig: base, ExcludedNamespaces: o.ExcludedNamespaces, CustomWorkloads: custom})
			return want, nil
		},
	}
}
