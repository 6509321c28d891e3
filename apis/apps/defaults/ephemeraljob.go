package defaults

import "github.com/kruise-ng/kruise/apis/apps/v1alpha1"

// SetDefaultsEphemeralJob applies the EphemeralJob defaults (oracle:
// apps.kruise.io_ephemeraljobs.yaml):
//   - spec.ttlSecondsAfterFinished: 1800 ("If this field is unset, default
//     value is 1800")
//
// spec.replicas stays nil (the oracle: when not set, "replicas will not
// work"); spec.parallelism has no documented default.
func SetDefaultsEphemeralJob(obj *v1alpha1.EphemeralJob) {
	defaultInt32(&obj.Spec.TTLSecondsAfterFinished, 1800)
}
