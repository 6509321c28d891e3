// Package defaults holds the defaulting that kruise-manager's mutating
// webhooks apply to policy.kruise.io objects.
//
// # Unknown defaults, left unset
//
// PodUnavailableBudget: neither the oracle CRD
// (policy.kruise.io_podunavailablebudgets.yaml) nor the OpenKruise user
// manual documents a default for spec.maxUnavailable, spec.minAvailable,
// spec.selector or spec.targetRef, so nothing is defaulted.
package defaults

import "github.com/kruise-ng/kruise/apis/policy/v1alpha1"

// SetDefaultsPodUnavailableBudget applies no defaults (none is documented
// for PodUnavailableBudget; see the package documentation). It exists so
// that the webhook has a defaulting entry point for every kind.
func SetDefaultsPodUnavailableBudget(obj *v1alpha1.PodUnavailableBudget) {}
