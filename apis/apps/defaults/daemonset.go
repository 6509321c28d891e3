package defaults

import (
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// SetDefaultsDaemonSetV1beta1 applies the Advanced DaemonSet defaults to the
// storage version. Sources: oracle apps.kruise.io_daemonsets.yaml and the
// user manual https://openkruise.io/docs/user-manuals/advanceddaemonset:
//   - spec.burstReplicas: 250 ("The default value is 250")
//   - spec.revisionHistoryLimit: 10 ("Defaults to 10.")
//   - spec.updateStrategy.type: RollingUpdate ("Default is RollingUpdate.")
//   - when the type is RollingUpdate, spec.updateStrategy.rollingUpdate is
//     created if absent and gets
//     rollingUpdateType Standard (user manual: Standard "is the default type
//     for RollingUpdate"),
//     maxUnavailable 1 ("Default value is 1."),
//     maxSurge 0 ("Default value is 0."),
//     partition 0 ("Default value is 0.").
//
// The pod template is left alone.
func SetDefaultsDaemonSetV1beta1(obj *v1beta1.DaemonSet) {
	spec := &obj.Spec
	defaultIntOrString(&spec.BurstReplicas, intstr.FromInt32(250))
	defaultInt32(&spec.RevisionHistoryLimit, 10)

	us := &spec.UpdateStrategy
	defaultString(&us.Type, v1beta1.DaemonSetRollingUpdateStrategyType)
	if us.Type == v1beta1.DaemonSetRollingUpdateStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &v1beta1.DaemonSetRollingUpdate{}
		}
		ru := us.RollingUpdate
		defaultString(&ru.Type, v1beta1.DaemonSetStandardRollingUpdateType)
		defaultIntOrString(&ru.MaxUnavailable, intstr.FromInt32(1))
		defaultIntOrString(&ru.MaxSurge, intstr.FromInt32(0))
		defaultIntOrString(&ru.Partition, intstr.FromInt32(0))
	}
}

// SetDefaultsDaemonSet applies the Advanced DaemonSet defaults to the
// v1alpha1 version; same values and sources as SetDefaultsDaemonSetV1beta1:
// burstReplicas 250, revisionHistoryLimit 10, updateStrategy.type
// RollingUpdate and, for RollingUpdate, rollingUpdateType Standard,
// maxUnavailable 1, maxSurge 0, partition 0.
func SetDefaultsDaemonSet(obj *v1alpha1.DaemonSet) {
	spec := &obj.Spec
	defaultIntOrString(&spec.BurstReplicas, intstr.FromInt32(250))
	defaultInt32(&spec.RevisionHistoryLimit, 10)

	us := &spec.UpdateStrategy
	defaultString(&us.Type, v1alpha1.DaemonSetRollingUpdateStrategyType)
	if us.Type == v1alpha1.DaemonSetRollingUpdateStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &v1alpha1.DaemonSetRollingUpdate{}
		}
		ru := us.RollingUpdate
		defaultString(&ru.Type, v1alpha1.DaemonSetStandardRollingUpdateType)
		defaultIntOrString(&ru.MaxUnavailable, intstr.FromInt32(1))
		defaultIntOrString(&ru.MaxSurge, intstr.FromInt32(0))
		defaultIntOrString(&ru.Partition, intstr.FromInt32(0))
	}
}
