package validating

import (
	"context"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
)

// Gate registers, before the API server stores a valid object that gets webhook entries of its
// own, the entries of the version being stored, and returns once the API server calls them
// (pkg/webhook/registration: Admission); an error refuses the object.
type Gate[T any] interface {
	Admit(ctx context.Context, obj T) error
}

// Gates are the registrations of the kinds whose objects get entries of their own; a nil gate
// registers nothing at admission.
type Gates struct {
	SidecarSet         Gate[*v1beta1.SidecarSet]
	Budget             Gate[*policyv1alpha1.PodUnavailableBudget]
	WorkloadSpread     Gate[*v1alpha1.WorkloadSpread]
	PersistentPodState Gate[*v1alpha1.PersistentPodState]
}

// admitStored passes obj, valid and about to be stored (or, in a dry run, that would be), to
// gate, which registers nothing for a dry run (the webhooks that call it declare sideEffects
// NoneOnDryRun) but answers it as it would answer the real request where it can.
func admitStored[T any](ctx context.Context, gate Gate[T], obj T) error {
	if gate == nil {
		return nil
	}
	return gate.Admit(ctx, obj)
}

// admitUpdate is admitStored for an update, which registers nothing when the generation stays:
// the spec is that of the version stored, whose admission registered its entries.
func admitUpdate[T interface{ GetGeneration() int64 }](ctx context.Context, gate Gate[T], old, obj T) error {
	if old.GetGeneration() == obj.GetGeneration() {
		return nil
	}
	return admitStored(ctx, gate, obj)
}
