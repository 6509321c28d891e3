package defaults

import "github.com/kruise-ng/kruise/apis/apps/v1alpha1"

// SetDefaultsWorkloadSpread writes nothing: OpenKruise v1.9.0 has no defaulting webhook for the
// WorkloadSpread, so its objects are stored as given. An unset spec.scheduleStrategy.type is
// read as Fixed ("Default is Fixed") where it is used. The function is kept so that every kind's
// webhook has a defaulting entry point.
func SetDefaultsWorkloadSpread(*v1alpha1.WorkloadSpread) {}
