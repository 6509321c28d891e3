package defaults

import "github.com/kruise-ng/kruise/apis/apps/v1alpha1"

// SetDefaultsUnitedDeployment applies the UnitedDeployment defaults (oracle:
// apps.kruise.io_uniteddeployments.yaml):
//   - spec.replicas: 1 ("If unspecified, defaults to 1.")
//   - spec.revisionHistoryLimit: 10 ("If unspecified, defaults to 10.")
//   - spec.updateStrategy.type: Manual ("Default is Manual.")
//   - spec.topology.scheduleStrategy.type: Fixed ("Default is Fixed")
//   - spec.topology.scheduleStrategy.adaptive, when given:
//     rescheduleCriticalSeconds 30 ("Default is 30 seconds."),
//     unschedulableDuration 300 ("with a default value of 300 seconds.")
//
// The subset templates are left alone: each child workload is defaulted by
// its own webhook when the controller creates it.
func SetDefaultsUnitedDeployment(obj *v1alpha1.UnitedDeployment) {
	spec := &obj.Spec
	defaultInt32(&spec.Replicas, 1)
	defaultInt32(&spec.RevisionHistoryLimit, 10)
	defaultString(&spec.UpdateStrategy.Type, v1alpha1.ManualUnitedDeploymentUpdateStrategyType)
	ss := &spec.Topology.ScheduleStrategy
	defaultString(&ss.Type, v1alpha1.FixedUnitedDeploymentScheduleStrategyType)
	if a := ss.Adaptive; a != nil {
		defaultInt32(&a.RescheduleCriticalSeconds, 30)
		defaultInt32(&a.UnschedulableDuration, 300)
	}
}
