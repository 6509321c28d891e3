package defaults

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// SetDefaultsStatefulSetV1beta1 applies the Advanced StatefulSet defaults of
// OpenKruise v1.9.0's StatefulSet webhook to the storage version (checked
// against the objects OpenKruise stored, see test/compat):
//   - spec.replicas: 1; spec.podManagementPolicy: OrderedReady;
//     spec.revisionHistoryLimit: 10; spec.updateStrategy.type: RollingUpdate;
//   - when the type is RollingUpdate, spec.updateStrategy.rollingUpdate is
//     created if absent and gets partition 0, maxUnavailable 1,
//     podUpdatePolicy ReCreate and minReadySeconds 0;
//   - spec.persistentVolumeClaimRetentionPolicy is created if absent and its
//     whenDeleted / whenScaled get Retain (OpenKruise's gate
//     StatefulSetAutoDeletePVC, on by default; Kruise always applies it).
//
// spec.volumeClaimUpdateStrategy is left as given (OpenKruise gives it type
// OnPVCDelete only under its gate StatefulSetAutoResizePVCGate, off by
// default). The pod template and volumeClaimTemplates are defaulted by
// SetDefaultsStatefulSetTemplateV1beta1.
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
		defaultInt32(&ru.MinReadySeconds, 0)
	}

	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	p := spec.PersistentVolumeClaimRetentionPolicy
	defaultString(&p.WhenDeleted, appsv1.RetainPersistentVolumeClaimRetentionPolicyType)
	defaultString(&p.WhenScaled, appsv1.RetainPersistentVolumeClaimRetentionPolicyType)
}

// SetDefaultsStatefulSetTemplateV1beta1 defaults an Advanced StatefulSet's pod
// template and volume claim templates as OpenKruise v1.9.0's StatefulSet
// webhook does (with its TemplateNoDefaults gate off, the default): the same
// functions as a CloneSet's (SetDefaultsCloneSetTemplate). The revision name
// of an Advanced StatefulSet is a hash of its stored pod template, so this is
// what makes one created through Kruise carry the revision names OpenKruise
// would give it.
func SetDefaultsStatefulSetTemplateV1beta1(obj *v1beta1.StatefulSet) {
	SetDefaultsPodTemplate(&obj.Spec.Template.Spec)
	SetDefaultsClaimTemplates(obj.Spec.VolumeClaimTemplates)
}

// SetDefaultsStatefulSet applies the Advanced StatefulSet defaults to the
// v1alpha1 version. OpenKruise v1.9.0 defaults a v1alpha1 StatefulSet by
// converting it to v1beta1, applying the v1beta1 defaults and converting it
// back, which drops the v1beta1-only fields; the result is the v1beta1
// defaults of the fields v1alpha1 has (SetDefaultsStatefulSetV1beta1 without
// the PVC retention policy):
//   - spec.replicas: 1; spec.podManagementPolicy: OrderedReady;
//     spec.revisionHistoryLimit: 10; spec.updateStrategy.type: RollingUpdate;
//   - for RollingUpdate: rollingUpdate created if absent, partition 0,
//     maxUnavailable 1, podUpdatePolicy ReCreate, minReadySeconds 0.
//
// The pod template and volumeClaimTemplates are defaulted by
// SetDefaultsStatefulSetTemplate.
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
		defaultInt32(&ru.MinReadySeconds, 0)
	}
}

// SetDefaultsStatefulSetTemplate is SetDefaultsStatefulSetTemplateV1beta1 for
// the v1alpha1 version.
func SetDefaultsStatefulSetTemplate(obj *v1alpha1.StatefulSet) {
	SetDefaultsPodTemplate(&obj.Spec.Template.Spec)
	SetDefaultsClaimTemplates(obj.Spec.VolumeClaimTemplates)
}
