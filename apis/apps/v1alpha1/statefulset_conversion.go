package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Every field of the v1alpha1 StatefulSet has the same name, type and meaning in v1beta1, so
// v1alpha1 -> v1beta1 -> v1alpha1 is a plain copy there and back.
//
// These v1beta1 fields have no v1alpha1 counterpart; on the way to v1alpha1 they are kept in the
// ConversionV1beta1OnlyAnnotation annotation and restored from it on the way back:
//
//	spec.reserveOrdinals
//	spec.lifecycle
//	spec.scaleStrategy
//	spec.persistentVolumeClaimRetentionPolicy
//	spec.ordinals
//	spec.volumeClaimUpdateStrategy
//	status.updatedReadyReplicas
//	status.updatedAvailableReplicas
//	status.volumeClaims

// statefulSetV1beta1Only is the content of ConversionV1beta1OnlyAnnotation on a v1alpha1
// StatefulSet.
type statefulSetV1beta1Only struct {
	Spec   *statefulSetSpecV1beta1Only   `json:"spec,omitempty"`
	Status *statefulSetStatusV1beta1Only `json:"status,omitempty"`
}

type statefulSetSpecV1beta1Only struct {
	ReserveOrdinals                      []intstr.IntOrString                                    `json:"reserveOrdinals,omitempty"`
	Lifecycle                            *appspub.Lifecycle                                      `json:"lifecycle,omitempty"`
	ScaleStrategy                        *v1beta1.StatefulSetScaleStrategy                       `json:"scaleStrategy,omitempty"`
	PersistentVolumeClaimRetentionPolicy *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy `json:"persistentVolumeClaimRetentionPolicy,omitempty"`
	Ordinals                             *appsv1.StatefulSetOrdinals                             `json:"ordinals,omitempty"`
	VolumeClaimUpdateStrategy            *v1beta1.StatefulSetVolumeClaimUpdateStrategy           `json:"volumeClaimUpdateStrategy,omitempty"`
}

type statefulSetStatusV1beta1Only struct {
	UpdatedReadyReplicas     int32                                  `json:"updatedReadyReplicas,omitempty"`
	UpdatedAvailableReplicas int32                                  `json:"updatedAvailableReplicas,omitempty"`
	VolumeClaims             []v1beta1.StatefulSetVolumeClaimStatus `json:"volumeClaims,omitempty"`
}

// ConvertTo converts this v1alpha1 StatefulSet into the v1beta1 hub. The v1beta1-only fields are
// taken from ConversionV1beta1OnlyAnnotation, which the result does not carry; without it they
// stay unset. The destination's TypeMeta is left alone.
func (src *StatefulSet) ConvertTo(dst *v1beta1.StatefulSet) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = statefulSetSpecToV1beta1(&src.Spec)
	dst.Status = statefulSetStatusToV1beta1(&src.Status)

	var stash statefulSetV1beta1Only
	if _, err := takeStash(&dst.ObjectMeta, ConversionV1beta1OnlyAnnotation, &stash); err != nil {
		return err
	}
	if s := stash.Spec; s != nil {
		dst.Spec.ReserveOrdinals = s.ReserveOrdinals
		dst.Spec.Lifecycle = s.Lifecycle
		dst.Spec.ScaleStrategy = s.ScaleStrategy
		dst.Spec.PersistentVolumeClaimRetentionPolicy = s.PersistentVolumeClaimRetentionPolicy
		dst.Spec.Ordinals = s.Ordinals
		if s.VolumeClaimUpdateStrategy != nil {
			dst.Spec.VolumeClaimUpdateStrategy = *s.VolumeClaimUpdateStrategy
		}
	}
	if s := stash.Status; s != nil {
		dst.Status.UpdatedReadyReplicas = s.UpdatedReadyReplicas
		dst.Status.UpdatedAvailableReplicas = s.UpdatedAvailableReplicas
		dst.Status.VolumeClaims = s.VolumeClaims
	}
	return nil
}

// ConvertFrom fills this v1alpha1 StatefulSet from the v1beta1 hub. The v1beta1-only fields that
// are set go into ConversionV1beta1OnlyAnnotation; when none is set the annotation is removed.
// This object's TypeMeta is left alone.
func (dst *StatefulSet) ConvertFrom(src *v1beta1.StatefulSet) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = statefulSetSpecFromV1beta1(&src.Spec)
	dst.Status = statefulSetStatusFromV1beta1(&src.Status)

	var stash statefulSetV1beta1Only
	spec := statefulSetSpecV1beta1Only{
		Lifecycle:                            src.Spec.Lifecycle.DeepCopy(),
		ScaleStrategy:                        src.Spec.ScaleStrategy.DeepCopy(),
		PersistentVolumeClaimRetentionPolicy: src.Spec.PersistentVolumeClaimRetentionPolicy.DeepCopy(),
		Ordinals:                             src.Spec.Ordinals.DeepCopy(),
	}
	if len(src.Spec.ReserveOrdinals) > 0 {
		spec.ReserveOrdinals = append([]intstr.IntOrString(nil), src.Spec.ReserveOrdinals...)
	}
	if src.Spec.VolumeClaimUpdateStrategy != (v1beta1.StatefulSetVolumeClaimUpdateStrategy{}) {
		spec.VolumeClaimUpdateStrategy = src.Spec.VolumeClaimUpdateStrategy.DeepCopy()
	}
	if spec.ReserveOrdinals != nil || spec.Lifecycle != nil || spec.ScaleStrategy != nil ||
		spec.PersistentVolumeClaimRetentionPolicy != nil || spec.Ordinals != nil ||
		spec.VolumeClaimUpdateStrategy != nil {
		stash.Spec = &spec
	}
	status := statefulSetStatusV1beta1Only{
		UpdatedReadyReplicas:     src.Status.UpdatedReadyReplicas,
		UpdatedAvailableReplicas: src.Status.UpdatedAvailableReplicas,
	}
	if len(src.Status.VolumeClaims) > 0 {
		status.VolumeClaims = append([]v1beta1.StatefulSetVolumeClaimStatus(nil), src.Status.VolumeClaims...)
	}
	if status.UpdatedReadyReplicas != 0 || status.UpdatedAvailableReplicas != 0 || status.VolumeClaims != nil {
		stash.Status = &status
	}
	return putStash(&dst.ObjectMeta, ConversionV1beta1OnlyAnnotation, &stash, stash.Spec != nil || stash.Status != nil)
}

func statefulSetSpecToV1beta1(in *StatefulSetSpec) v1beta1.StatefulSetSpec {
	return v1beta1.StatefulSetSpec{
		Replicas:             copyPtr(in.Replicas),
		Selector:             in.Selector.DeepCopy(),
		Template:             *in.Template.DeepCopy(),
		VolumeClaimTemplates: deepCopyItems(in.VolumeClaimTemplates),
		ServiceName:          in.ServiceName,
		PodManagementPolicy:  in.PodManagementPolicy,
		UpdateStrategy: v1beta1.StatefulSetUpdateStrategy{
			Type:          in.UpdateStrategy.Type,
			RollingUpdate: statefulSetRollingUpdateToV1beta1(in.UpdateStrategy.RollingUpdate),
		},
		RevisionHistoryLimit: copyPtr(in.RevisionHistoryLimit),
	}
}

func statefulSetSpecFromV1beta1(in *v1beta1.StatefulSetSpec) StatefulSetSpec {
	return StatefulSetSpec{
		Replicas:             copyPtr(in.Replicas),
		Selector:             in.Selector.DeepCopy(),
		Template:             *in.Template.DeepCopy(),
		VolumeClaimTemplates: deepCopyItems(in.VolumeClaimTemplates),
		ServiceName:          in.ServiceName,
		PodManagementPolicy:  in.PodManagementPolicy,
		UpdateStrategy: StatefulSetUpdateStrategy{
			Type:          in.UpdateStrategy.Type,
			RollingUpdate: statefulSetRollingUpdateFromV1beta1(in.UpdateStrategy.RollingUpdate),
		},
		RevisionHistoryLimit: copyPtr(in.RevisionHistoryLimit),
	}
}

func statefulSetRollingUpdateToV1beta1(in *StatefulSetRollingUpdateStrategy) *v1beta1.StatefulSetRollingUpdateStrategy {
	if in == nil {
		return nil
	}
	out := &v1beta1.StatefulSetRollingUpdateStrategy{
		Partition:             copyPtr(in.Partition),
		MaxUnavailable:        copyPtr(in.MaxUnavailable),
		PodUpdatePolicy:       v1beta1.StatefulSetPodUpdatePolicyType(in.PodUpdatePolicy),
		Paused:                in.Paused,
		InPlaceUpdateStrategy: copyPtr(in.InPlaceUpdateStrategy),
		MinReadySeconds:       copyPtr(in.MinReadySeconds),
	}
	if in.UnorderedUpdate != nil {
		out.UnorderedUpdate = &v1beta1.StatefulSetUnorderedUpdateStrategy{
			PriorityStrategy: in.UnorderedUpdate.PriorityStrategy.DeepCopy(),
		}
	}
	return out
}

func statefulSetRollingUpdateFromV1beta1(in *v1beta1.StatefulSetRollingUpdateStrategy) *StatefulSetRollingUpdateStrategy {
	if in == nil {
		return nil
	}
	out := &StatefulSetRollingUpdateStrategy{
		Partition:             copyPtr(in.Partition),
		MaxUnavailable:        copyPtr(in.MaxUnavailable),
		PodUpdatePolicy:       StatefulSetPodUpdatePolicyType(in.PodUpdatePolicy),
		Paused:                in.Paused,
		InPlaceUpdateStrategy: copyPtr(in.InPlaceUpdateStrategy),
		MinReadySeconds:       copyPtr(in.MinReadySeconds),
	}
	if in.UnorderedUpdate != nil {
		out.UnorderedUpdate = &StatefulSetUnorderedUpdateStrategy{
			PriorityStrategy: in.UnorderedUpdate.PriorityStrategy.DeepCopy(),
		}
	}
	return out
}

func statefulSetStatusToV1beta1(in *StatefulSetStatus) v1beta1.StatefulSetStatus {
	out := v1beta1.StatefulSetStatus{
		ObservedGeneration: in.ObservedGeneration,
		Replicas:           in.Replicas,
		ReadyReplicas:      in.ReadyReplicas,
		AvailableReplicas:  in.AvailableReplicas,
		CurrentReplicas:    in.CurrentReplicas,
		UpdatedReplicas:    in.UpdatedReplicas,
		CurrentRevision:    in.CurrentRevision,
		UpdateRevision:     in.UpdateRevision,
		CollisionCount:     copyPtr(in.CollisionCount),
		LabelSelector:      in.LabelSelector,
	}
	if in.Conditions != nil {
		out.Conditions = make([]v1beta1.StatefulSetCondition, len(in.Conditions))
		for i, c := range in.Conditions {
			out.Conditions[i] = v1beta1.StatefulSetCondition{
				Type:               c.Type,
				Status:             c.Status,
				LastTransitionTime: *c.LastTransitionTime.DeepCopy(),
				Reason:             c.Reason,
				Message:            c.Message,
			}
		}
	}
	return out
}

func statefulSetStatusFromV1beta1(in *v1beta1.StatefulSetStatus) StatefulSetStatus {
	out := StatefulSetStatus{
		ObservedGeneration: in.ObservedGeneration,
		Replicas:           in.Replicas,
		ReadyReplicas:      in.ReadyReplicas,
		AvailableReplicas:  in.AvailableReplicas,
		CurrentReplicas:    in.CurrentReplicas,
		UpdatedReplicas:    in.UpdatedReplicas,
		CurrentRevision:    in.CurrentRevision,
		UpdateRevision:     in.UpdateRevision,
		CollisionCount:     copyPtr(in.CollisionCount),
		LabelSelector:      in.LabelSelector,
	}
	if in.Conditions != nil {
		out.Conditions = make([]StatefulSetCondition, len(in.Conditions))
		for i, c := range in.Conditions {
			out.Conditions[i] = StatefulSetCondition{
				Type:               c.Type,
				Status:             c.Status,
				LastTransitionTime: *c.LastTransitionTime.DeepCopy(),
				Reason:             c.Reason,
				Message:            c.Message,
			}
		}
	}
	return out
}
