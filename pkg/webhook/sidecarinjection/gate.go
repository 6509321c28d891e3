package sidecarinjection

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=kruise-sidecarset-injection,verbs=get

// NewGate is the SidecarSet's admission side of the registration: before the API server stores a
// SidecarSet (its create, or an update that changes what it selects), the entry of that spec is
// added, and the SidecarSet is answered once the API server calls it, so that every pod created
// after the SidecarSet's create or update returned is sent to Kruise. A paused SidecarSet, or
// one that selects no pod, has no entry to wait for.
func NewGate(a registration.Admission, configuration string, source registration.Source, reader client.Reader, excluded []string) *registration.Gate[*v1beta1.SidecarSet, admissionregistrationv1.MutatingWebhook] {
	return &registration.Gate[*v1beta1.SidecarSet, admissionregistrationv1.MutatingWebhook]{
		Admission: a, Configuration: configuration, Source: source, Reader: reader, Kind: "SidecarSet",
		Key: func(s *v1beta1.SidecarSet) string { return s.Name },
		Entries: func(_ context.Context, s *v1beta1.SidecarSet, base admissionregistrationv1.WebhookClientConfig) ([]admissionregistrationv1.MutatingWebhook, error) {
			want, _ := Entries([]*v1beta1.SidecarSet{s}, EntryOptions{ClientConfig: base, ExcludedNamespaces: excluded})
			return want, nil
		},
	}
}
