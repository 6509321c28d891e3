package v1alpha1

import (
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// DaemonSetProgressiveCreatePodAnnotation set to "true" on a v1alpha1 DaemonSet makes the rolling
// update partition also limit how many nodes get a new daemon pod: it is the v1alpha1 form of
// v1beta1's spec.scaleStrategy.partitionedScaling (OpenKruise's annotation of the same name).
const DaemonSetProgressiveCreatePodAnnotation = "daemonset.kruise.io/progressive-create-pod"

// DaemonSetSurgingRollingUpdateType is the deprecated v1alpha1 rollingUpdateType "Surging": a
// Standard rolling update with maxSurge 1 and maxUnavailable 0 unless set. The defaulting webhook
// rewrites it so (defaults.SetDefaultsDaemonSet); v1beta1 has no such type, and a v1alpha1
// DaemonSet that still carries it converts to Standard.
const DaemonSetSurgingRollingUpdateType DaemonSetRollingUpdateType = "Surging"

// The v1alpha1 and v1beta1 DaemonSets differ in three places, as in OpenKruise v1.9.0:
//
//   - status.daemonSetHash (v1alpha1) and status.updateRevision (v1beta1) are the same value, the
//     revision name of the current template, under two names; each converts to the other.
//   - spec.scaleStrategy.partitionedScaling (v1beta1) is the annotation
//     DaemonSetProgressiveCreatePodAnnotation "true" in v1alpha1. The v1alpha1 annotation decides
//     the v1beta1 field, and the v1beta1 field decides whether the v1alpha1 object shows the
//     annotation as "true". The annotation itself is carried over as it is (OpenKruise leaves it
//     on the stored object too); where the v1alpha1 object must show another value than the
//     v1beta1 object holds, or where an empty scaleStrategy ({}) must be told from none, the
//     v1beta1 state is kept in ConversionV1beta1OnlyAnnotation, so that a round trip loses nothing.
//   - rollingUpdateType "Surging" exists only in v1alpha1 and converts to Standard (one way).
//
// Every other field has the same name, type and meaning in both versions and is copied as is.

// daemonSetV1beta1Only is the content of ConversionV1beta1OnlyAnnotation on a v1alpha1 DaemonSet.
type daemonSetV1beta1Only struct {
	Metadata *daemonSetMetaV1beta1Only `json:"metadata,omitempty"`
	Spec     *daemonSetSpecV1beta1Only `json:"spec,omitempty"`
}

// daemonSetMetaV1beta1Only is the v1beta1 object's own progressive-create-pod annotation, kept when
// the v1alpha1 object shows another value.
type daemonSetMetaV1beta1Only struct {
	// ProgressiveCreatePod is the annotation's value on the v1beta1 object; null when it had none.
	ProgressiveCreatePod *string `json:"progressiveCreatePod"`
}

type daemonSetSpecV1beta1Only struct {
	ScaleStrategy *v1beta1.DaemonSetScaleStrategy `json:"scaleStrategy,omitempty"`
}

// ConvertTo converts this v1alpha1 DaemonSet into the v1beta1 hub: spec.scaleStrategy.partitionedScaling
// is whether DaemonSetProgressiveCreatePodAnnotation is "true", and ConversionV1beta1OnlyAnnotation
// (which the result does not carry) gives back an empty scaleStrategy and the hub's own
// progressive-create-pod annotation. The destination's TypeMeta is left alone.
func (src *DaemonSet) ConvertTo(dst *v1beta1.DaemonSet) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = daemonSetSpecToV1beta1(&src.Spec)
	dst.Status = daemonSetStatusToV1beta1(&src.Status)

	var stash daemonSetV1beta1Only
	if _, err := takeStash(&dst.ObjectMeta, ConversionV1beta1OnlyAnnotation, &stash); err != nil {
		return err
	}
	if stash.Spec != nil {
		dst.Spec.ScaleStrategy = stash.Spec.ScaleStrategy
	}
	partitioned := src.Annotations[DaemonSetProgressiveCreatePodAnnotation] == "true"
	switch {
	case dst.Spec.ScaleStrategy != nil:
		dst.Spec.ScaleStrategy.PartitionedScaling = partitioned
	case partitioned:
		dst.Spec.ScaleStrategy = &v1beta1.DaemonSetScaleStrategy{PartitionedScaling: true}
	}
	if m := stash.Metadata; m != nil {
		if m.ProgressiveCreatePod == nil {
			dropAnnotation(&dst.ObjectMeta, DaemonSetProgressiveCreatePodAnnotation)
		} else {
			if dst.Annotations == nil {
				dst.Annotations = map[string]string{}
			}
			dst.Annotations[DaemonSetProgressiveCreatePodAnnotation] = *m.ProgressiveCreatePod
		}
	}
	return nil
}

// ConvertFrom fills this v1alpha1 DaemonSet from the v1beta1 hub: DaemonSetProgressiveCreatePodAnnotation
// is "true" exactly when spec.scaleStrategy.partitionedScaling is; what the v1alpha1 object cannot
// show goes into ConversionV1beta1OnlyAnnotation (removed when there is nothing to keep). This
// object's TypeMeta is left alone.
func (dst *DaemonSet) ConvertFrom(src *v1beta1.DaemonSet) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = daemonSetSpecFromV1beta1(&src.Spec)
	dst.Status = daemonSetStatusFromV1beta1(&src.Status)

	var stash daemonSetV1beta1Only
	ss := src.Spec.ScaleStrategy
	partitioned := ss != nil && ss.PartitionedScaling
	if ss != nil && !partitioned { // the annotation cannot tell an empty scaleStrategy from none
		stash.Spec = &daemonSetSpecV1beta1Only{ScaleStrategy: ss.DeepCopy()}
	}
	own, had := src.Annotations[DaemonSetProgressiveCreatePodAnnotation]
	switch {
	case partitioned && own != "true":
		stash.Metadata = &daemonSetMetaV1beta1Only{}
		if had {
			stash.Metadata.ProgressiveCreatePod = &own
		}
		if dst.Annotations == nil {
			dst.Annotations = map[string]string{}
		}
		dst.Annotations[DaemonSetProgressiveCreatePodAnnotation] = "true"
	case !partitioned && own == "true":
		stash.Metadata = &daemonSetMetaV1beta1Only{ProgressiveCreatePod: &own}
		dropAnnotation(&dst.ObjectMeta, DaemonSetProgressiveCreatePodAnnotation)
	}
	return putStash(&dst.ObjectMeta, ConversionV1beta1OnlyAnnotation, &stash, stash.Spec != nil || stash.Metadata != nil)
}

func daemonSetSpecToV1beta1(in *DaemonSetSpec) v1beta1.DaemonSetSpec {
	out := v1beta1.DaemonSetSpec{
		Selector: in.Selector.DeepCopy(),
		Template: *in.Template.DeepCopy(),
		UpdateStrategy: v1beta1.DaemonSetUpdateStrategy{
			Type: v1beta1.DaemonSetUpdateStrategyType(in.UpdateStrategy.Type),
		},
		MinReadySeconds:      in.MinReadySeconds,
		BurstReplicas:        copyPtr(in.BurstReplicas),
		RevisionHistoryLimit: copyPtr(in.RevisionHistoryLimit),
		Lifecycle:            in.Lifecycle.DeepCopy(),
	}
	if ru := in.UpdateStrategy.RollingUpdate; ru != nil {
		typ := v1beta1.DaemonSetRollingUpdateType(ru.Type)
		if ru.Type == DaemonSetSurgingRollingUpdateType {
			typ = v1beta1.DaemonSetStandardRollingUpdateType
		}
		out.UpdateStrategy.RollingUpdate = &v1beta1.DaemonSetRollingUpdate{
			Type:           typ,
			MaxUnavailable: copyPtr(ru.MaxUnavailable),
			MaxSurge:       copyPtr(ru.MaxSurge),
			Partition:      copyPtr(ru.Partition),
			Paused:         copyPtr(ru.Paused),
			Selector:       ru.Selector.DeepCopy(),
		}
	}
	return out
}

func daemonSetSpecFromV1beta1(in *v1beta1.DaemonSetSpec) DaemonSetSpec {
	out := DaemonSetSpec{
		Selector: in.Selector.DeepCopy(),
		Template: *in.Template.DeepCopy(),
		UpdateStrategy: DaemonSetUpdateStrategy{
			Type: DaemonSetUpdateStrategyType(in.UpdateStrategy.Type),
		},
		MinReadySeconds:      in.MinReadySeconds,
		BurstReplicas:        copyPtr(in.BurstReplicas),
		RevisionHistoryLimit: copyPtr(in.RevisionHistoryLimit),
		Lifecycle:            in.Lifecycle.DeepCopy(),
	}
	if ru := in.UpdateStrategy.RollingUpdate; ru != nil {
		out.UpdateStrategy.RollingUpdate = &DaemonSetRollingUpdate{
			Type:           DaemonSetRollingUpdateType(ru.Type),
			MaxUnavailable: copyPtr(ru.MaxUnavailable),
			MaxSurge:       copyPtr(ru.MaxSurge),
			Partition:      copyPtr(ru.Partition),
			Paused:         copyPtr(ru.Paused),
			Selector:       ru.Selector.DeepCopy(),
		}
	}
	return out
}

func daemonSetStatusToV1beta1(in *DaemonSetStatus) v1beta1.DaemonSetStatus {
	out := v1beta1.DaemonSetStatus{
		CurrentNumberScheduled: in.CurrentNumberScheduled,
		NumberMisscheduled:     in.NumberMisscheduled,
		DesiredNumberScheduled: in.DesiredNumberScheduled,
		NumberReady:            in.NumberReady,
		ObservedGeneration:     in.ObservedGeneration,
		UpdatedNumberScheduled: in.UpdatedNumberScheduled,
		NumberAvailable:        in.NumberAvailable,
		NumberUnavailable:      in.NumberUnavailable,
		CollisionCount:         copyPtr(in.CollisionCount),
		UpdateRevision:         in.DaemonSetHash,
	}
	if in.Conditions != nil {
		out.Conditions = make([]v1beta1.DaemonSetCondition, len(in.Conditions))
		for i, c := range in.Conditions {
			out.Conditions[i] = v1beta1.DaemonSetCondition{
				Type:               v1beta1.DaemonSetConditionType(c.Type),
				Status:             c.Status,
				LastTransitionTime: *c.LastTransitionTime.DeepCopy(),
				Reason:             c.Reason,
				Message:            c.Message,
			}
		}
	}
	return out
}

func daemonSetStatusFromV1beta1(in *v1beta1.DaemonSetStatus) DaemonSetStatus {
	out := DaemonSetStatus{
		CurrentNumberScheduled: in.CurrentNumberScheduled,
		NumberMisscheduled:     in.NumberMisscheduled,
		DesiredNumberScheduled: in.DesiredNumberScheduled,
		NumberReady:            in.NumberReady,
		ObservedGeneration:     in.ObservedGeneration,
		UpdatedNumberScheduled: in.UpdatedNumberScheduled,
		NumberAvailable:        in.NumberAvailable,
		NumberUnavailable:      in.NumberUnavailable,
		CollisionCount:         copyPtr(in.CollisionCount),
		DaemonSetHash:          in.UpdateRevision,
	}
	if in.Conditions != nil {
		out.Conditions = make([]DaemonSetCondition, len(in.Conditions))
		for i, c := range in.Conditions {
			out.Conditions[i] = DaemonSetCondition{
				Type:               DaemonSetConditionType(c.Type),
				Status:             c.Status,
				LastTransitionTime: *c.LastTransitionTime.DeepCopy(),
				Reason:             c.Reason,
				Message:            c.Message,
			}
		}
	}
	return out
}
