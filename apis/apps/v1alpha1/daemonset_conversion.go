package v1alpha1

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The v1alpha1 and v1beta1 DaemonSets differ in two places:
//
//   - status.daemonSetHash (v1alpha1) and status.updateRevision (v1beta1) are the same value, the
//     revision name of the current template, under two names; each converts to the other.
//   - spec.scaleStrategy exists only in v1beta1. On the way to v1alpha1 it is kept in the
//     ConversionV1beta1OnlyAnnotation annotation and restored from it on the way back.
//
// Every other field has the same name, type and meaning in both versions and is copied as is.

// daemonSetV1beta1Only is the content of ConversionV1beta1OnlyAnnotation on a v1alpha1 DaemonSet.
type daemonSetV1beta1Only struct {
	Spec *daemonSetSpecV1beta1Only `json:"spec,omitempty"`
}

type daemonSetSpecV1beta1Only struct {
	ScaleStrategy *v1beta1.DaemonSetScaleStrategy `json:"scaleStrategy,omitempty"`
}

// ConvertTo converts this v1alpha1 DaemonSet into the v1beta1 hub. spec.scaleStrategy is taken from
// ConversionV1beta1OnlyAnnotation, which the result does not carry. The destination's TypeMeta is
// left alone.
func (src *DaemonSet) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*v1beta1.DaemonSet)
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
	return nil
}

// ConvertFrom fills this v1alpha1 DaemonSet from the v1beta1 hub. A set spec.scaleStrategy goes
// into ConversionV1beta1OnlyAnnotation; otherwise the annotation is removed. This object's
// TypeMeta is left alone.
func (dst *DaemonSet) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*v1beta1.DaemonSet)
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = daemonSetSpecFromV1beta1(&src.Spec)
	dst.Status = daemonSetStatusFromV1beta1(&src.Status)

	var stash daemonSetV1beta1Only
	if src.Spec.ScaleStrategy != nil {
		stash.Spec = &daemonSetSpecV1beta1Only{ScaleStrategy: src.Spec.ScaleStrategy.DeepCopy()}
	}
	return putStash(&dst.ObjectMeta, ConversionV1beta1OnlyAnnotation, &stash, stash.Spec != nil)
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
		out.UpdateStrategy.RollingUpdate = &v1beta1.DaemonSetRollingUpdate{
			Type:           v1beta1.DaemonSetRollingUpdateType(ru.Type),
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
