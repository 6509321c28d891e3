package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func TestSetDefaultsBroadcastJobV1beta1(t *testing.T) {
	userSet := &v1beta1.BroadcastJob{Spec: v1beta1.BroadcastJobSpec{
		Template:         corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}},
		Parallelism:      ioi(0),
		CompletionPolicy: v1beta1.BroadcastJobCompletionPolicy{Type: v1beta1.BroadcastJobCompletionPolicyNever},
		FailurePolicy:    v1beta1.BroadcastJobFailurePolicy{Type: v1beta1.BroadcastJobFailurePolicyTypeContinue},
	}}
	run(t, []tcase[v1beta1.BroadcastJob]{
		{
			name: "empty object gets every default",
			in:   &v1beta1.BroadcastJob{},
			want: &v1beta1.BroadcastJob{Spec: v1beta1.BroadcastJobSpec{
				Template:         corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure}},
				CompletionPolicy: v1beta1.BroadcastJobCompletionPolicy{Type: v1beta1.BroadcastJobCompletionPolicyAlways},
				FailurePolicy:    v1beta1.BroadcastJobFailurePolicy{Type: v1beta1.BroadcastJobFailurePolicyTypeFailFast},
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsBroadcastJobV1beta1, (*v1beta1.BroadcastJob).DeepCopy)
}

func TestSetDefaultsBroadcastJob(t *testing.T) {
	userSet := &v1alpha1.BroadcastJob{Spec: v1alpha1.BroadcastJobSpec{
		Template:         corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}},
		Parallelism:      ios("20%"),
		CompletionPolicy: v1alpha1.BroadcastJobCompletionPolicy{Type: v1alpha1.BroadcastJobCompletionPolicyNever},
		FailurePolicy:    v1alpha1.BroadcastJobFailurePolicy{Type: v1alpha1.BroadcastJobFailurePolicyTypePause},
	}}
	run(t, []tcase[v1alpha1.BroadcastJob]{
		{
			name: "empty object gets every default",
			in:   &v1alpha1.BroadcastJob{},
			want: &v1alpha1.BroadcastJob{Spec: v1alpha1.BroadcastJobSpec{
				Template:         corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure}},
				CompletionPolicy: v1alpha1.BroadcastJobCompletionPolicy{Type: v1alpha1.BroadcastJobCompletionPolicyAlways},
				FailurePolicy:    v1alpha1.BroadcastJobFailurePolicy{Type: v1alpha1.BroadcastJobFailurePolicyTypeFailFast},
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsBroadcastJob, (*v1alpha1.BroadcastJob).DeepCopy)
}

func defaultedPullTemplateV1beta1() v1beta1.ImagePullJobTemplate {
	return v1beta1.ImagePullJobTemplate{
		Parallelism:      ioi(1),
		PullPolicy:       &v1beta1.ImagePullJobPullPolicy{TimeoutSeconds: i32(600), BackoffLimit: i32(3)},
		CompletionPolicy: v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways},
		ImagePullPolicy:  v1beta1.ImagePullJobPullIfNotPresent,
	}
}

func userPullTemplateV1beta1() v1beta1.ImagePullJobTemplate {
	return v1beta1.ImagePullJobTemplate{
		Parallelism:      ioi(0),
		PullPolicy:       &v1beta1.ImagePullJobPullPolicy{TimeoutSeconds: i32(0), BackoffLimit: i32(0)},
		CompletionPolicy: v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionNever},
		ImagePullPolicy:  v1beta1.ImagePullJobPullAlways,
	}
}

func defaultedPullTemplate() v1alpha1.ImagePullJobTemplate {
	return v1alpha1.ImagePullJobTemplate{
		Parallelism:      ioi(1),
		PullPolicy:       &v1alpha1.ImagePullJobPullPolicy{TimeoutSeconds: i32(600), BackoffLimit: i32(3)},
		CompletionPolicy: v1alpha1.ImagePullJobCompletionPolicy{Type: v1alpha1.ImagePullJobCompletionAlways},
		ImagePullPolicy:  v1alpha1.ImagePullJobPullIfNotPresent,
	}
}

func userPullTemplate() v1alpha1.ImagePullJobTemplate {
	return v1alpha1.ImagePullJobTemplate{
		Parallelism:      ios("50%"),
		PullPolicy:       &v1alpha1.ImagePullJobPullPolicy{TimeoutSeconds: i32(0), BackoffLimit: i32(0)},
		CompletionPolicy: v1alpha1.ImagePullJobCompletionPolicy{Type: v1alpha1.ImagePullJobCompletionNever},
		ImagePullPolicy:  v1alpha1.ImagePullJobPullAlways,
	}
}

func TestSetDefaultsImagePullJobV1beta1(t *testing.T) {
	userSet := &v1beta1.ImagePullJob{Spec: v1beta1.ImagePullJobSpec{Image: "nginx", ImagePullJobTemplate: userPullTemplateV1beta1()}}
	run(t, []tcase[v1beta1.ImagePullJob]{
		{
			name: "empty object gets every default",
			in:   &v1beta1.ImagePullJob{},
			want: &v1beta1.ImagePullJob{Spec: v1beta1.ImagePullJobSpec{ImagePullJobTemplate: defaultedPullTemplateV1beta1()}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
		{
			name: "partial pullPolicy completed",
			in: &v1beta1.ImagePullJob{Spec: v1beta1.ImagePullJobSpec{ImagePullJobTemplate: v1beta1.ImagePullJobTemplate{
				PullPolicy: &v1beta1.ImagePullJobPullPolicy{TimeoutSeconds: i32(60)},
			}}},
			want: func() *v1beta1.ImagePullJob {
				tmpl := defaultedPullTemplateV1beta1()
				tmpl.PullPolicy.TimeoutSeconds = i32(60)
				return &v1beta1.ImagePullJob{Spec: v1beta1.ImagePullJobSpec{ImagePullJobTemplate: tmpl}}
			}(),
		},
	}, SetDefaultsImagePullJobV1beta1, (*v1beta1.ImagePullJob).DeepCopy)
}

func TestSetDefaultsImagePullJob(t *testing.T) {
	userSet := &v1alpha1.ImagePullJob{Spec: v1alpha1.ImagePullJobSpec{Image: "nginx", ImagePullJobTemplate: userPullTemplate()}}
	run(t, []tcase[v1alpha1.ImagePullJob]{
		{
			name: "empty object gets every default",
			in:   &v1alpha1.ImagePullJob{},
			want: &v1alpha1.ImagePullJob{Spec: v1alpha1.ImagePullJobSpec{ImagePullJobTemplate: defaultedPullTemplate()}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsImagePullJob, (*v1alpha1.ImagePullJob).DeepCopy)
}

func TestSetDefaultsImageListPullJobV1beta1(t *testing.T) {
	userSet := &v1beta1.ImageListPullJob{Spec: v1beta1.ImageListPullJobSpec{Images: []string{"a"}, ImagePullJobTemplate: userPullTemplateV1beta1()}}
	run(t, []tcase[v1beta1.ImageListPullJob]{
		{
			name: "empty object gets every default",
			in:   &v1beta1.ImageListPullJob{},
			want: &v1beta1.ImageListPullJob{Spec: v1beta1.ImageListPullJobSpec{ImagePullJobTemplate: defaultedPullTemplateV1beta1()}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsImageListPullJobV1beta1, (*v1beta1.ImageListPullJob).DeepCopy)
}

func TestSetDefaultsImageListPullJob(t *testing.T) {
	userSet := &v1alpha1.ImageListPullJob{Spec: v1alpha1.ImageListPullJobSpec{Images: []string{"a"}, ImagePullJobTemplate: userPullTemplate()}}
	run(t, []tcase[v1alpha1.ImageListPullJob]{
		{
			name: "empty object gets every default",
			in:   &v1alpha1.ImageListPullJob{},
			want: &v1alpha1.ImageListPullJob{Spec: v1alpha1.ImageListPullJobSpec{ImagePullJobTemplate: defaultedPullTemplate()}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsImageListPullJob, (*v1alpha1.ImageListPullJob).DeepCopy)
}

func TestSetDefaultsNodeImageV1beta1(t *testing.T) {
	userSet := &v1beta1.NodeImage{Spec: v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{
		"nginx": {Tags: []v1beta1.NodeImageTagSpec{{
			Tag:             "1",
			PullPolicy:      &v1beta1.NodeImageTagPullPolicy{TimeoutSeconds: i32(0), BackoffLimit: i32(0)},
			ImagePullPolicy: v1beta1.ImagePullJobPullAlways,
		}}},
	}}}
	run(t, []tcase[v1beta1.NodeImage]{
		{name: "empty object unchanged", in: &v1beta1.NodeImage{}, want: &v1beta1.NodeImage{}},
		{
			name: "tag gets every default",
			in: &v1beta1.NodeImage{Spec: v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{
				"nginx": {Tags: []v1beta1.NodeImageTagSpec{{Tag: "1"}}},
			}}},
			want: &v1beta1.NodeImage{Spec: v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{
				"nginx": {Tags: []v1beta1.NodeImageTagSpec{{
					Tag:             "1",
					PullPolicy:      &v1beta1.NodeImageTagPullPolicy{TimeoutSeconds: i32(600), BackoffLimit: i32(3)},
					ImagePullPolicy: v1beta1.ImagePullJobPullIfNotPresent,
				}}},
			}}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsNodeImageV1beta1, (*v1beta1.NodeImage).DeepCopy)
}

func TestSetDefaultsNodeImage(t *testing.T) {
	userSet := &v1alpha1.NodeImage{Spec: v1alpha1.NodeImageSpec{Images: map[string]v1alpha1.NodeImageImageSpec{
		"nginx": {Tags: []v1alpha1.NodeImageTagSpec{{
			Tag:             "1",
			PullPolicy:      &v1alpha1.NodeImageTagPullPolicy{TimeoutSeconds: i32(5), BackoffLimit: i32(0)},
			ImagePullPolicy: v1alpha1.ImagePullJobPullAlways,
		}}},
	}}}
	run(t, []tcase[v1alpha1.NodeImage]{
		{name: "empty object unchanged", in: &v1alpha1.NodeImage{}, want: &v1alpha1.NodeImage{}},
		{
			name: "tag gets every default",
			in: &v1alpha1.NodeImage{Spec: v1alpha1.NodeImageSpec{Images: map[string]v1alpha1.NodeImageImageSpec{
				"nginx": {Tags: []v1alpha1.NodeImageTagSpec{{Tag: "1"}}},
			}}},
			want: &v1alpha1.NodeImage{Spec: v1alpha1.NodeImageSpec{Images: map[string]v1alpha1.NodeImageImageSpec{
				"nginx": {Tags: []v1alpha1.NodeImageTagSpec{{
					Tag:             "1",
					PullPolicy:      &v1alpha1.NodeImageTagPullPolicy{TimeoutSeconds: i32(600), BackoffLimit: i32(3)},
					ImagePullPolicy: v1alpha1.ImagePullJobPullIfNotPresent,
				}}},
			}}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsNodeImage, (*v1alpha1.NodeImage).DeepCopy)
}

func TestSetDefaultsAdvancedCronJobV1beta1(t *testing.T) {
	userSet := &v1beta1.AdvancedCronJob{Spec: v1beta1.AdvancedCronJobSpec{
		ConcurrencyPolicy:          v1beta1.AdvancedCronJobForbidConcurrent,
		Paused:                     bp(true),
		SuccessfulJobsHistoryLimit: i32(0),
		FailedJobsHistoryLimit:     i32(0),
		TimeZone:                   sp("Etc/UTC"),
	}}
	run(t, []tcase[v1beta1.AdvancedCronJob]{
		{
			name: "empty object gets every default",
			in:   &v1beta1.AdvancedCronJob{},
			want: &v1beta1.AdvancedCronJob{Spec: v1beta1.AdvancedCronJobSpec{
				ConcurrencyPolicy:          v1beta1.AdvancedCronJobAllowConcurrent,
				Paused:                     bp(false),
				SuccessfulJobsHistoryLimit: i32(3),
				FailedJobsHistoryLimit:     i32(1),
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsAdvancedCronJobV1beta1, (*v1beta1.AdvancedCronJob).DeepCopy)
}

func TestSetDefaultsAdvancedCronJob(t *testing.T) {
	userSet := &v1alpha1.AdvancedCronJob{Spec: v1alpha1.AdvancedCronJobSpec{
		ConcurrencyPolicy:          v1alpha1.AdvancedCronJobReplaceConcurrent,
		Paused:                     bp(false),
		SuccessfulJobsHistoryLimit: i32(7),
		FailedJobsHistoryLimit:     i32(0),
	}}
	run(t, []tcase[v1alpha1.AdvancedCronJob]{
		{
			name: "empty object gets every default",
			in:   &v1alpha1.AdvancedCronJob{},
			want: &v1alpha1.AdvancedCronJob{Spec: v1alpha1.AdvancedCronJobSpec{
				ConcurrencyPolicy:          v1alpha1.AdvancedCronJobAllowConcurrent,
				Paused:                     bp(false),
				SuccessfulJobsHistoryLimit: i32(3),
				FailedJobsHistoryLimit:     i32(1),
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsAdvancedCronJob, (*v1alpha1.AdvancedCronJob).DeepCopy)
}

func TestSetDefaultsEphemeralJob(t *testing.T) {
	userSet := &v1alpha1.EphemeralJob{Spec: v1alpha1.EphemeralJobSpec{TTLSecondsAfterFinished: i32(0)}}
	run(t, []tcase[v1alpha1.EphemeralJob]{
		{
			name: "empty object gets every default",
			in:   &v1alpha1.EphemeralJob{},
			want: &v1alpha1.EphemeralJob{Spec: v1alpha1.EphemeralJobSpec{TTLSecondsAfterFinished: i32(1800)}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsEphemeralJob, (*v1alpha1.EphemeralJob).DeepCopy)
}
