package defaults

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// SetDefaultsStatefulSetV1beta1 applies the Advanced StatefulSet defaults to
// the storage version (oracle: apps.kruise.io_statefulsets.yaml, v1beta1):
//   - spec.replicas: 1 ("If unspecified, defaults to 1.")
//   - spec.podManagementPolicy: OrderedReady ("The default policy is `OrderedReady`")
//   - spec.revisionHistoryLimit: 10 ("The default value is 10.")
//   - spec.updateStrategy.type: RollingUpdate ("Default is RollingUpdate.")
//   - when the type is RollingUpdate, spec.updateStrategy.rollingUpdate is
//     created if absent and gets
//     partition 0 ("Default value is 0."),
//     maxUnavailable 1 ("Defaults to 1."),
//     podUpdatePolicy ReCreate ("Default value is \"ReCreate\"").
//   - spec.persistentVolumeClaimRetentionPolicy.whenDeleted / whenScaled:
//     Retain ("The default policy of `Retain`"), only when the user gave the
//     policy struct.
//
// The pod template and volumeClaimTemplates are left alone.
func SetDefaultsStatefulSetV1beta1(obj *v1beta1.StatefulSet) {
	spec := &obj.Spec
	defaultInt32(&spec.Replicas, 1)
	defaultString(&spec.PodManagementPolicy, appsv1.OrderedReadyPodManagement)
	defaultInt32(&spec.RevisionHistoryLimit, 10)

	us := &spec.UpdateStrategy
	defaultString(&us.Type, appsv1.RollingUpdateStatefulSetStrategyType)
	if us.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &v1beta1.StatefulSetRollingUpdateStrategy{}
		}
		ru := us.RollingUpdate
		defaultInt32(&ru.Partition, 0)
		defaultIntOrString(&ru.MaxUnavailable, intstr.FromInt32(1))
		defaultString(&ru.PodUpdatePolicy, v1beta1.RecreateStatefulSetPodUpdatePolicy)
	}

	if p := spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		defaultString(&p.WhenDeleted, appsv1.RetainPersistentVolumeClaimRetentionPolicyType)
		defaultString(&p.WhenScaled, appsv1.RetainPersistentVolumeClaimRetentionPolicyType)
	}
}

// SetDefaultsStatefulSet applies the Advanced StatefulSet defaults to the
// v1alpha1 version (oracle: apps.kruise.io_statefulsets.yaml, v1alpha1); the
// values are those of SetDefaultsStatefulSetV1beta1 for the shared fields:
//   - spec.replicas: 1; spec.podManagementPolicy: OrderedReady;
//     spec.revisionHistoryLimit: 10; spec.updateStrategy.type: RollingUpdate;
//   - for RollingUpdate: rollingUpdate created if absent, partition 0,
//     maxUnavailable 1, podUpdatePolicy ReCreate.
func SetDefaultsStatefulSet(obj *v1alpha1.StatefulSet) {
	spec := &obj.Spec
	defaultInt32(&spec.Replicas, 1)
	defaultString(&spec.PodManagementPolicy, appsv1.OrderedReadyPodManagement)
	defaultInt32(&spec.RevisionHistoryLimit, 10)

	us := &spec.UpdateStrategy
	defaultString(&us.Type, appsv1.RollingUpdateStatefulSetStrategyType)
	if us.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &v1alpha1.StatefulSetRollingUpdateStrategy{}
		}
		ru := us.RollingUpdate
		defaultInt32(&ru.Partition, 0)
		defaultIntOrString(&ru.MaxUnavailable, intstr.FromInt32(1))
		defaultString(&ru.PodUpdatePolicy, v1alpha1.RecreateStatefulSetPodUpdatePolicy)
	}
}
