package sidecarinjection

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=kruise-sidecarset-injection,verbs=get

// Gate is the SidecarSet's admission side of the registration: before the API server stores a
// SidecarSet (its create, or an update that changes what it selects), Admit adds the entry of
// that spec and returns once the API server calls it, so that every pod created after the
// SidecarSet's create or update returned is sent to Kruise (registration.Admission).
type Gate struct {
	// Reader reads the pod webhook's client config (Source), normally from the cache.
	Reader client.Reader
	// Admission writes and confirms the entries.
	Admission registration.Admission
	// Configuration is the MutatingWebhookConfiguration of the entries.
	Configuration string
	// Source is the webhook whose client config the entries copy.
	Source registration.Source
	// ExcludedNamespaces never call the entries.
	ExcludedNamespaces []string
}

// Admit registers set's entry (none when its injection is paused or it selects no pod) and
// returns once the API server calls it; an error says why it could not be confirmed, and the
// SidecarSet is then refused: a pod created right after it might not get its sidecars.
func (g *Gate) Admit(ctx context.Context, set *v1beta1.SidecarSet) error {
	base, err := g.Source.ClientConfig(ctx, g.Reader)
	if err != nil {
		return fmt.Errorf("SidecarSet %s: its injection webhook entry cannot be registered: %w", set.Name, err)
	}
	if base == nil {
		return fmt.Errorf("SidecarSet %s: its injection webhook entry cannot be registered yet: Kruise's webhook has no CA bundle (kruise-manager is starting); retry", set.Name)
	}
	want, _ := Entries([]*v1beta1.SidecarSet{set}, EntryOptions{ClientConfig: *base, ExcludedNamespaces: g.ExcludedNamespaces})
	err = g.Admission.AdmitMutating(ctx, g.Configuration, registration.Object{Key: set.Name, Generation: set.Generation, Probe: *base}, want)
	switch {
	case errors.Is(err, registration.ErrNotConfirmed):
		return fmt.Errorf("SidecarSet %s: refused so that no pod misses its sidecars: %w; retry", set.Name, err)
	case err != nil:
		return fmt.Errorf("SidecarSet %s: its injection webhook entry cannot be registered: %w; retry", set.Name, err)
	}
	return nil
}
