package defaults

import (
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// SetDefaultsDaemonSetV1beta1 applies the Advanced DaemonSet defaults of OpenKruise v1.9.0's
// DaemonSet webhook (SetDefaultsDaemonSetV1beta1) to the storage version, checked against the
// DaemonSet OpenKruise stored in its takeover fixture:
//   - spec.burstReplicas: 250; spec.revisionHistoryLimit: 10;
//   - spec.updateStrategy.type: RollingUpdate;
//   - for RollingUpdate, spec.updateStrategy.rollingUpdate is created if absent and gets
//     rollingUpdateType Standard and, only when neither is set, maxUnavailable 1 and maxSurge 0
//     (one of them set alone is left alone: maxSurge 2 means a surge update, maxUnavailable 0).
//
// rollingUpdate.partition is left unset (the controller reads unset as 0), and so is the pod
// template: OpenKruise defaults neither, and the revision name is a hash of the stored template.
func SetDefaultsDaemonSetV1beta1(obj *v1beta1.DaemonSet) {
	spec := &obj.Spec
	defaultIntOrString(&spec.BurstReplicas, intstr.FromInt32(250))
	defaultInt32(&spec.RevisionHistoryLimit, 10)

	us := &spec.UpdateStrategy
	defaultString(&us.Type, v1beta1.DaemonSetRollingUpdateStrategyType)
	if us.Type != v1beta1.DaemonSetRollingUpdateStrategyType {
		return
	}
	if us.RollingUpdate == nil {
		us.RollingUpdate = &v1beta1.DaemonSetRollingUpdate{}
	}
	ru := us.RollingUpdate
	defaultString(&ru.Type, v1beta1.DaemonSetStandardRollingUpdateType)
	if ru.MaxUnavailable == nil && ru.MaxSurge == nil {
		defaultIntOrString(&ru.MaxUnavailable, intstr.FromInt32(1))
		defaultIntOrString(&ru.MaxSurge, intstr.FromInt32(0))
	}
}

// SetDefaultsDaemonSet applies the Advanced DaemonSet defaults to the v1alpha1 version, as
// OpenKruise v1.9.0's SetDefaultsDaemonSet does: those of SetDefaultsDaemonSetV1beta1, after the
// deprecated rollingUpdateType Surging is rewritten to Standard with maxSurge 1 and
// maxUnavailable 0 where they are unset (what Surging meant).
func SetDefaultsDaemonSet(obj *v1alpha1.DaemonSet) {
	spec := &obj.Spec
	defaultIntOrString(&spec.BurstReplicas, intstr.FromInt32(250))
	defaultInt32(&spec.RevisionHistoryLimit, 10)

	us := &spec.UpdateStrategy
	defaultString(&us.Type, v1alpha1.DaemonSetRollingUpdateStrategyType)
	if us.Type != v1alpha1.DaemonSetRollingUpdateStrategyType {
		return
	}
	if us.RollingUpdate == nil {
		us.RollingUpdate = &v1alpha1.DaemonSetRollingUpdate{}
	}
	ru := us.RollingUpdate
	if ru.Type == v1alpha1.DaemonSetSurgingRollingUpdateType {
		defaultIntOrString(&ru.MaxSurge, intstr.FromInt32(1))
		defaultIntOrString(&ru.MaxUnavailable, intstr.FromInt32(0))
		ru.Type = v1alpha1.DaemonSetStandardRollingUpdateType
	}
	defaultString(&ru.Type, v1alpha1.DaemonSetStandardRollingUpdateType)
	if ru.MaxUnavailable == nil && ru.MaxSurge == nil {
		defaultIntOrString(&ru.MaxUnavailable, intstr.FromInt32(1))
		defaultIntOrString(&ru.MaxSurge, intstr.FromInt32(0))
	}
}
