package v1alpha1

import (
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The v1alpha1 and v1beta1 BroadcastJobs have the same fields, names, types and meanings (their
// CRD converts with strategy None): a conversion copies every field, and loses nothing either way.
// These functions are for code that needs one version's object as the other's, such as the
// validating webhook.

// BroadcastJobToV1beta1 returns src as a v1beta1 BroadcastJob (TypeMeta left empty).
func BroadcastJobToV1beta1(src *BroadcastJob) *v1beta1.BroadcastJob {
	dst := &v1beta1.BroadcastJob{}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	s := &src.Spec
	dst.Spec = v1beta1.BroadcastJobSpec{
		Parallelism: copyPtr(s.Parallelism),
		Template:    *s.Template.DeepCopy(),
		CompletionPolicy: v1beta1.BroadcastJobCompletionPolicy{
			Type:                    v1beta1.BroadcastJobCompletionPolicyType(s.CompletionPolicy.Type),
			ActiveDeadlineSeconds:   copyPtr(s.CompletionPolicy.ActiveDeadlineSeconds),
			TTLSecondsAfterFinished: copyPtr(s.CompletionPolicy.TTLSecondsAfterFinished),
		},
		Paused: s.Paused,
		FailurePolicy: v1beta1.BroadcastJobFailurePolicy{
			Type:         v1beta1.BroadcastJobFailurePolicyType(s.FailurePolicy.Type),
			RestartLimit: s.FailurePolicy.RestartLimit,
		},
	}
	st := &src.Status
	dst.Status = v1beta1.BroadcastJobStatus{
		StartTime:      st.StartTime.DeepCopy(),
		CompletionTime: st.CompletionTime.DeepCopy(),
		Active:         st.Active,
		Succeeded:      st.Succeeded,
		Failed:         st.Failed,
		Desired:        st.Desired,
		Phase:          v1beta1.BroadcastJobPhase(st.Phase),
	}
	for _, c := range st.Conditions {
		dst.Status.Conditions = append(dst.Status.Conditions, v1beta1.BroadcastJobCondition{
			Type: v1beta1.BroadcastJobConditionType(c.Type), Status: c.Status, LastProbeTime: *c.LastProbeTime.DeepCopy(),
			LastTransitionTime: *c.LastTransitionTime.DeepCopy(), Reason: c.Reason, Message: c.Message,
		})
	}
	return dst
}

// BroadcastJobFromV1beta1 returns src as a v1alpha1 BroadcastJob (TypeMeta left empty).
func BroadcastJobFromV1beta1(src *v1beta1.BroadcastJob) *BroadcastJob {
	dst := &BroadcastJob{}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	s := &src.Spec
	dst.Spec = BroadcastJobSpec{
		Parallelism: copyPtr(s.Parallelism),
		Template:    *s.Template.DeepCopy(),
		CompletionPolicy: BroadcastJobCompletionPolicy{
			Type:                    BroadcastJobCompletionPolicyType(s.CompletionPolicy.Type),
			ActiveDeadlineSeconds:   copyPtr(s.CompletionPolicy.ActiveDeadlineSeconds),
			TTLSecondsAfterFinished: copyPtr(s.CompletionPolicy.TTLSecondsAfterFinished),
		},
		Paused: s.Paused,
		FailurePolicy: BroadcastJobFailurePolicy{
			Type:         BroadcastJobFailurePolicyType(s.FailurePolicy.Type),
			RestartLimit: s.FailurePolicy.RestartLimit,
		},
	}
	st := &src.Status
	dst.Status = BroadcastJobStatus{
		StartTime:      st.StartTime.DeepCopy(),
		CompletionTime: st.CompletionTime.DeepCopy(),
		Active:         st.Active,
		Succeeded:      st.Succeeded,
		Failed:         st.Failed,
		Desired:        st.Desired,
		Phase:          BroadcastJobPhase(st.Phase),
	}
	for _, c := range st.Conditions {
		dst.Status.Conditions = append(dst.Status.Conditions, BroadcastJobCondition{
			Type: BroadcastJobConditionType(c.Type), Status: c.Status, LastProbeTime: *c.LastProbeTime.DeepCopy(),
			LastTransitionTime: *c.LastTransitionTime.DeepCopy(), Reason: c.Reason, Message: c.Message,
		})
	}
	return dst
}
