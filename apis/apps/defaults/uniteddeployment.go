package defaults

import "github.com/kruise-ng/kruise/apis/apps/v1alpha1"

// SetDefaultsUnitedDeployment applies the UnitedDeployment defaults, those OpenKruise v1.9.0's
// UnitedDeployment webhook writes (SetDefaultsUnitedDeployment):
//   - spec.replicas: 1 ("If unspecified, defaults to 1.");
//   - spec.revisionHistoryLimit: 10;
//   - spec.updateStrategy.type: Manual, and with type Manual an empty manualUpdate ({}) when
//     there is none.
//
// Nothing else is written: spec.topology.scheduleStrategy.type ("Default is Fixed") and the
// adaptive strategy's rescheduleCriticalSeconds (30) and unschedulableDuration (300) are read as
// those values when unset, as OpenKruise reads them, but stay unset in the stored object, as
// OpenKruise stores them. The subset templates are left alone: each child workload is defaulted by
// its own webhook when the controller creates it.
func SetDefaultsUnitedDeployment(obj *v1alpha1.UnitedDeployment) {
	spec := &obj.Spec
	defaultInt32(&spec.Replicas, 1)
	defaultInt32(&spec.RevisionHistoryLimit, 10)
	defaultString(&spec.UpdateStrategy.Type, v1alpha1.ManualUnitedDeploymentUpdateStrategyType)
	if spec.UpdateStrategy.Type == v1alpha1.ManualUnitedDeploymentUpdateStrategyType && spec.UpdateStrategy.ManualUpdate == nil {
		spec.UpdateStrategy.ManualUpdate = &v1alpha1.UnitedDeploymentManualUpdate{}
	}
}
