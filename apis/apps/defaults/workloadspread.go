package defaults

import "github.com/kruise-ng/kruise/apis/apps/v1alpha1"

// SetDefaultsWorkloadSpread applies the WorkloadSpread defaults (oracle:
// apps.kruise.io_workloadspreads.yaml):
//   - spec.scheduleStrategy.type: Fixed ("Default is Fixed")
//
// scheduleStrategy.adaptive.disableSimulationSchedule defaults to false, its
// zero value; rescheduleCriticalSeconds has no documented default.
func SetDefaultsWorkloadSpread(obj *v1alpha1.WorkloadSpread) {
	defaultString(&obj.Spec.ScheduleStrategy.Type, v1alpha1.WorkloadSpreadFixedScheduleStrategy)
}
