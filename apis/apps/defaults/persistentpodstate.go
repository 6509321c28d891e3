package defaults

import "github.com/kruise-ng/kruise/apis/apps/v1alpha1"

// SetDefaultsPersistentPodState applies the PersistentPodState defaults
// (oracle: apps.kruise.io_persistentpodstates.yaml):
//   - spec.persistentPodStateRetentionPolicy: WhenScaled ("The default policy
//     of 'WhenScaled'")
func SetDefaultsPersistentPodState(obj *v1alpha1.PersistentPodState) {
	defaultString(&obj.Spec.PersistentPodStateRetentionPolicy, v1alpha1.PersistentPodStateRetainWhenScaled)
}
