package defaults

import "github.com/kruise-ng/kruise/apis/apps/v1alpha1"

// SetDefaultsPersistentPodState writes nothing: OpenKruise v1.9.0 has no defaulting webhook for
// the PersistentPodState, so its objects are stored as given. An unset
// spec.persistentPodStateRetentionPolicy is read as WhenScaled ("The default policy of
// 'WhenScaled'") where it is used. The function is kept so that every kind's webhook has a
// defaulting entry point.
func SetDefaultsPersistentPodState(*v1alpha1.PersistentPodState) {}
