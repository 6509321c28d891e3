package validating

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func validBroadcastJob() *v1beta1.BroadcastJob {
	return &v1beta1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: "upgrade-kubelet", Namespace: "ns"},
		Spec: v1beta1.BroadcastJobSpec{
			Parallelism: ptr.To(intstr.FromString("20%")),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "upgrade"}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
			CompletionPolicy: v1beta1.BroadcastJobCompletionPolicy{Type: v1beta1.BroadcastJobCompletionPolicyAlways,
				ActiveDeadlineSeconds: ptr.To[int64](60), TTLSecondsAfterFinished: ptr.To[int32](0)},
			FailurePolicy: v1beta1.BroadcastJobFailurePolicy{Type: v1beta1.BroadcastJobFailurePolicyTypePause, RestartLimit: 3},
		},
	}
}

func TestValidateBroadcastJob(t *testing.T) {
	if errs := ValidateBroadcastJob(validBroadcastJob()); len(errs) != 0 {
		t.Fatalf("a valid job: %v", errs)
	}
	for name, c := range map[string]struct {
		mutate func(*v1beta1.BroadcastJob)
		field  string
	}{
		"restartPolicy Always": {func(j *v1beta1.BroadcastJob) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways },
			"spec.template.spec.restartPolicy"},
		"restartPolicy unset": {func(j *v1beta1.BroadcastJob) { j.Spec.Template.Spec.RestartPolicy = "" }, "spec.template.spec.restartPolicy"},
		"preset job name label": {func(j *v1beta1.BroadcastJob) { j.Spec.Template.Labels["broadcastjob-name"] = "x" },
			"spec.template.metadata.labels"},
		"preset controller uid label": {func(j *v1beta1.BroadcastJob) { j.Spec.Template.Labels["broadcastjob-controller-uid"] = "x" },
			"spec.template.metadata.labels"},
		"bad label":    {func(j *v1beta1.BroadcastJob) { j.Spec.Template.Labels["a"] = "b c" }, "spec.template.metadata.labels"},
		"no container": {func(j *v1beta1.BroadcastJob) { j.Spec.Template.Spec.Containers = nil }, "spec.template.spec.containers"},
		"no image":     {func(j *v1beta1.BroadcastJob) { j.Spec.Template.Spec.Containers[0].Image = "" }, "spec.template.spec.containers[0].image"},
		"Never + ttl": {func(j *v1beta1.BroadcastJob) {
			j.Spec.CompletionPolicy = v1beta1.BroadcastJobCompletionPolicy{Type: v1beta1.BroadcastJobCompletionPolicyNever, TTLSecondsAfterFinished: ptr.To[int32](5)}
		}, "spec.completionPolicy.ttlSecondsAfterFinished"},
		"Never + deadline": {func(j *v1beta1.BroadcastJob) {
			j.Spec.CompletionPolicy = v1beta1.BroadcastJobCompletionPolicy{Type: v1beta1.BroadcastJobCompletionPolicyNever, ActiveDeadlineSeconds: ptr.To[int64](5)}
		}, "spec.completionPolicy.activeDeadlineSeconds"},
		"deadline 0":         {func(j *v1beta1.BroadcastJob) { j.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To[int64](0) }, "spec.completionPolicy.activeDeadlineSeconds"},
		"negative ttl":       {func(j *v1beta1.BroadcastJob) { j.Spec.CompletionPolicy.TTLSecondsAfterFinished = ptr.To[int32](-1) }, "spec.completionPolicy.ttlSecondsAfterFinished"},
		"unknown completion": {func(j *v1beta1.BroadcastJob) { j.Spec.CompletionPolicy.Type = "Sometimes" }, "spec.completionPolicy.type"},
		"unknown failure":    {func(j *v1beta1.BroadcastJob) { j.Spec.FailurePolicy.Type = "Retry" }, "spec.failurePolicy.type"},
		"negative restarts":  {func(j *v1beta1.BroadcastJob) { j.Spec.FailurePolicy.RestartLimit = -1 }, "spec.failurePolicy.restartLimit"},
		"negative par":       {func(j *v1beta1.BroadcastJob) { j.Spec.Parallelism = ptr.To(intstr.FromInt32(-1)) }, "spec.parallelism"},
		"par 150%":           {func(j *v1beta1.BroadcastJob) { j.Spec.Parallelism = ptr.To(intstr.FromString("150%")) }, "spec.parallelism"},
		"par word":           {func(j *v1beta1.BroadcastJob) { j.Spec.Parallelism = ptr.To(intstr.FromString("all")) }, "spec.parallelism"},
		"name with a dot":    {func(j *v1beta1.BroadcastJob) { j.Name = "a.b" }, "metadata.name"},
		"name too long":      {func(j *v1beta1.BroadcastJob) { j.Name = strings.Repeat("a", 64) }, "metadata.name"},
	} {
		j := validBroadcastJob()
		c.mutate(j)
		errs := ValidateBroadcastJob(j)
		if len(errs) == 0 || !hasField(errs, c.field) {
			t.Errorf("%s: errors %v, want one at %s", name, errs, c.field)
		}
	}
	// What OpenKruise accepts stays accepted: defaults unset, Never without its Always-only knobs.
	for name, mutate := range map[string]func(*v1beta1.BroadcastJob){
		"types unset": func(j *v1beta1.BroadcastJob) { j.Spec.CompletionPolicy.Type, j.Spec.FailurePolicy.Type = "", "" },
		"Never": func(j *v1beta1.BroadcastJob) {
			j.Spec.CompletionPolicy = v1beta1.BroadcastJobCompletionPolicy{Type: "Never"}
		},
		"parallelism 0":   func(j *v1beta1.BroadcastJob) { j.Spec.Parallelism = ptr.To(intstr.FromInt32(0)) },
		"parallelism nil": func(j *v1beta1.BroadcastJob) { j.Spec.Parallelism = nil },
		"upper case name": func(j *v1beta1.BroadcastJob) { j.Name = "Job-1" },
	} {
		j := validBroadcastJob()
		mutate(j)
		if errs := ValidateBroadcastJob(j); len(errs) != 0 {
			t.Errorf("%s: %v", name, errs)
		}
	}
}

func hasField(errs field.ErrorList, f string) bool {
	for _, e := range errs {
		if e.Field == f {
			return true
		}
	}
	return false
}

// countingTemplates records the templates it is asked to check and refuses them all.
type countingTemplates struct{ calls int }

func (c *countingTemplates) Check(_ context.Context, _ string, _ *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	c.calls++
	return field.ErrorList{field.Invalid(p.Child("spec", "containers").Index(0).Child("image"), "x", "refused by the API server")}
}

// Both versions are validated as v1beta1, the API server's verdict on the template included; an
// update dry-runs the template only when it changed.
func TestBroadcastJobValidatorBothVersions(t *testing.T) {
	ctx := context.Background()
	checker := &countingTemplates{}
	beta := broadcastJobValidator[*v1beta1.BroadcastJob]{templates: checker, toV1beta1: same[*v1beta1.BroadcastJob]}
	alpha := broadcastJobValidator[*v1alpha1.BroadcastJob]{templates: checker, toV1beta1: broadcastJobToV1beta1}

	toAlpha := func(j *v1beta1.BroadcastJob) *v1alpha1.BroadcastJob {
		return v1alpha1.BroadcastJobFromV1beta1(j)
	}
	bad := validBroadcastJob()
	bad.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	for name, err := range map[string]error{
		"v1beta1":  second(beta.ValidateCreate(ctx, bad)),
		"v1alpha1": second(alpha.ValidateCreate(ctx, toAlpha(bad))),
	} {
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template.spec.restartPolicy") {
			t.Errorf("%s: %v, want Invalid at spec.template.spec.restartPolicy", name, err)
		}
	}
	if checker.calls != 0 {
		t.Errorf("an invalid job's template was dry-run %d times", checker.calls)
	}
	good := validBroadcastJob()
	if err := second(alpha.ValidateCreate(ctx, toAlpha(good))); !apierrors.IsInvalid(err) || checker.calls != 1 {
		t.Errorf("the API server's refusal: %v (%d checks)", err, checker.calls)
	}
	paused := good.DeepCopy()
	paused.Spec.Paused = true
	if err := second(beta.ValidateUpdate(ctx, good, paused)); err != nil || checker.calls != 1 {
		t.Errorf("an update leaving the template: %v (%d checks)", err, checker.calls)
	}
	changed := good.DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "busybox:2"
	if err := second(alpha.ValidateUpdate(ctx, toAlpha(good), toAlpha(changed))); !apierrors.IsInvalid(err) || checker.calls != 2 {
		t.Errorf("an update changing the template: %v (%d checks)", err, checker.calls)
	}
}

func second[A, B any](_ A, b B) B { return b }

// v1alpha1 and v1beta1 BroadcastJobs hold the same fields: a round trip loses nothing.
func TestBroadcastJobConversionRoundTrip(t *testing.T) {
	now := metav1.Now()
	in := validBroadcastJob()
	in.Spec.Paused = true
	in.Status = v1beta1.BroadcastJobStatus{StartTime: &now, CompletionTime: &now, Active: 1, Succeeded: 2, Failed: 3, Desired: 6,
		Phase: v1beta1.BroadcastJobPhaseFailed, Conditions: []v1beta1.BroadcastJobCondition{{Type: v1beta1.BroadcastJobFailed,
			Status: corev1.ConditionTrue, LastProbeTime: now, LastTransitionTime: now, Reason: "Failed", Message: "m"}}}
	alpha := v1alpha1.BroadcastJobFromV1beta1(in)
	back := v1alpha1.BroadcastJobToV1beta1(alpha)
	if !equality.Semantic.DeepEqual(in, back) {
		t.Errorf("round trip changed the job:\n%+v\n%+v", in, back)
	}
	if alpha.Spec.FailurePolicy.Type != v1alpha1.BroadcastJobFailurePolicyTypePause || alpha.Status.Conditions[0].Type != v1alpha1.BroadcastJobFailed {
		t.Errorf("v1alpha1 form: %+v", alpha)
	}
}
