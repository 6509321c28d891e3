package v1alpha1

import (
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The AdvancedCronJob CRD converts between its versions with strategy None, as OpenKruise's
// does: the API server only rewrites apiVersion, and a v1alpha1 read drops what v1alpha1 has no
// field for (spec.template.imageListPullJobTemplate). These functions do the same for code that
// needs one version's object as the other's, such as the validating webhook. Every other field
// has the same name, type and meaning in both versions (the BroadcastJob template's spec converts
// as a BroadcastJob's does).

// AdvancedCronJobToV1beta1 returns src as a v1beta1 AdvancedCronJob (TypeMeta left empty).
func AdvancedCronJobToV1beta1(src *AdvancedCronJob) *v1beta1.AdvancedCronJob {
	dst := &v1beta1.AdvancedCronJob{}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	s := &src.Spec
	dst.Spec = v1beta1.AdvancedCronJobSpec{Schedule: s.Schedule, TimeZone: copyPtr(s.TimeZone),
		StartingDeadlineSeconds: copyPtr(s.StartingDeadlineSeconds), ConcurrencyPolicy: v1beta1.AdvancedCronJobConcurrencyPolicy(s.ConcurrencyPolicy),
		Paused: copyPtr(s.Paused), SuccessfulJobsHistoryLimit: copyPtr(s.SuccessfulJobsHistoryLimit), FailedJobsHistoryLimit: copyPtr(s.FailedJobsHistoryLimit)}
	dst.Spec.Template.JobTemplate = s.Template.JobTemplate.DeepCopy()
	if b := s.Template.BroadcastJobTemplate; b != nil {
		out := &v1beta1.AdvancedCronJobBroadcastJobTemplate{Spec: BroadcastJobToV1beta1(&BroadcastJob{Spec: b.Spec}).Spec}
		b.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
		dst.Spec.Template.BroadcastJobTemplate = out
	}
	dst.Status = v1beta1.AdvancedCronJobStatus{Type: v1beta1.AdvancedCronJobTemplateKind(src.Status.Type),
		Active: deepCopyItems(src.Status.Active), LastScheduleTime: src.Status.LastScheduleTime.DeepCopy()}
	return dst
}

// AdvancedCronJobFromV1beta1 returns src as a v1alpha1 AdvancedCronJob (TypeMeta left empty),
// without spec.template.imageListPullJobTemplate, which v1alpha1 cannot hold.
func AdvancedCronJobFromV1beta1(src *v1beta1.AdvancedCronJob) *AdvancedCronJob {
	dst := &AdvancedCronJob{}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	s := &src.Spec
	dst.Spec = AdvancedCronJobSpec{Schedule: s.Schedule, TimeZone: copyPtr(s.TimeZone),
		StartingDeadlineSeconds: copyPtr(s.StartingDeadlineSeconds), ConcurrencyPolicy: AdvancedCronJobConcurrencyPolicy(s.ConcurrencyPolicy),
		Paused: copyPtr(s.Paused), SuccessfulJobsHistoryLimit: copyPtr(s.SuccessfulJobsHistoryLimit), FailedJobsHistoryLimit: copyPtr(s.FailedJobsHistoryLimit)}
	dst.Spec.Template.JobTemplate = s.Template.JobTemplate.DeepCopy()
	if b := s.Template.BroadcastJobTemplate; b != nil {
		out := &AdvancedCronJobBroadcastJobTemplate{Spec: BroadcastJobFromV1beta1(&v1beta1.BroadcastJob{Spec: b.Spec}).Spec}
		b.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
		dst.Spec.Template.BroadcastJobTemplate = out
	}
	dst.Status = AdvancedCronJobStatus{Type: AdvancedCronJobTemplateKind(src.Status.Type),
		Active: deepCopyItems(src.Status.Active), LastScheduleTime: src.Status.LastScheduleTime.DeepCopy()}
	return dst
}
