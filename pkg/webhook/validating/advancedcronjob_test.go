package validating

import (
	"context"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func validCronJob() *v1beta1.AdvancedCronJob {
	acj := &v1beta1.AdvancedCronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns"},
		Spec: v1beta1.AdvancedCronJobSpec{Schedule: "*/5 * * * *", Template: v1beta1.AdvancedCronJobTemplate{JobTemplate: &batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nightly"}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}}}}}}
	defaults.SetDefaultsAdvancedCronJobV1beta1(acj)
	return acj
}

func broadcastTemplate() *v1beta1.AdvancedCronJobBroadcastJobTemplate {
	return &v1beta1.AdvancedCronJobBroadcastJobTemplate{Spec: v1beta1.BroadcastJobSpec{
		CompletionPolicy: v1beta1.BroadcastJobCompletionPolicy{Type: v1beta1.BroadcastJobCompletionPolicyAlways, TTLSecondsAfterFinished: ptr.To[int32](30)},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}}}
}

func errorFields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

// TestValidateAdvancedCronJob: OpenKruise's rules, each refused at its field.
func TestValidateAdvancedCronJob(t *testing.T) {
	valid := []struct {
		name   string
		mutate func(*v1beta1.AdvancedCronJob)
	}{
		{"a job template", func(*v1beta1.AdvancedCronJob) {}},
		{"a broadcast job template", func(a *v1beta1.AdvancedCronJob) {
			a.Spec.Template = v1beta1.AdvancedCronJobTemplate{BroadcastJobTemplate: broadcastTemplate()}
		}},
		{"an image list pull job template, long name", func(a *v1beta1.AdvancedCronJob) {
			a.Name = strings.Repeat("a", 63)
			a.Spec.Template = v1beta1.AdvancedCronJobTemplate{ImageListPullJobTemplate: &v1beta1.AdvancedCronJobImageListPullJobTemplate{
				Spec: v1beta1.ImageListPullJobSpec{Images: []string{"nginx:1.25"}}}}
		}},
		{"a 52-character name with a job template", func(a *v1beta1.AdvancedCronJob) { a.Name = strings.Repeat("a", 52) }},
		{"a time zone", func(a *v1beta1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("Asia/Shanghai") }},
		{"a CRON_TZ prefix", func(a *v1beta1.AdvancedCronJob) { a.Spec.Schedule = "CRON_TZ=UTC 0 9 * * *" }},
		{"a descriptor", func(a *v1beta1.AdvancedCronJob) { a.Spec.Schedule = "@hourly" }},
		{"zero limits and deadline", func(a *v1beta1.AdvancedCronJob) {
			a.Spec.StartingDeadlineSeconds, a.Spec.SuccessfulJobsHistoryLimit, a.Spec.FailedJobsHistoryLimit = ptr.To[int64](0), ptr.To[int32](0), ptr.To[int32](0)
		}},
	}
	for _, c := range valid {
		acj := validCronJob()
		c.mutate(acj)
		if errs := ValidateAdvancedCronJob(acj); len(errs) > 0 {
			t.Errorf("%s: %v", c.name, errs)
		}
	}

	invalid := []struct {
		name   string
		mutate func(*v1beta1.AdvancedCronJob)
		field  string
	}{
		{"a dot in the name", func(a *v1beta1.AdvancedCronJob) { a.Name = "night.ly" }, "metadata.name"},
		{"a 64-character name", func(a *v1beta1.AdvancedCronJob) { a.Name = strings.Repeat("a", 64) }, "metadata.name"},
		{"a 53-character name with a job template", func(a *v1beta1.AdvancedCronJob) { a.Name = strings.Repeat("a", 53) }, "metadata.name"},
		{"no schedule", func(a *v1beta1.AdvancedCronJob) { a.Spec.Schedule = "" }, "spec.schedule"},
		{"a bad schedule", func(a *v1beta1.AdvancedCronJob) { a.Spec.Schedule = "*/5 * * *" }, "spec.schedule"},
		{"a minute out of range", func(a *v1beta1.AdvancedCronJob) { a.Spec.Schedule = "61 * * * *" }, "spec.schedule"},
		{"a zone prefix without a schedule", func(a *v1beta1.AdvancedCronJob) { a.Spec.Schedule = "TZ=UTC" }, "spec.schedule"},
		{"a zone prefix and timeZone", func(a *v1beta1.AdvancedCronJob) {
			a.Spec.Schedule, a.Spec.TimeZone = "TZ=UTC 0 9 * * *", ptr.To("UTC")
		}, "spec.schedule"},
		{"an unknown time zone", func(a *v1beta1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("Mars/Olympus_Mons") }, "spec.timeZone"},
		{"an empty time zone", func(a *v1beta1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("") }, "spec.timeZone"},
		{"the Local time zone", func(a *v1beta1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("Local") }, "spec.timeZone"},
		{"an unknown concurrency policy", func(a *v1beta1.AdvancedCronJob) { a.Spec.ConcurrencyPolicy = "Sometimes" }, "spec.concurrencyPolicy"},
		{"a negative deadline", func(a *v1beta1.AdvancedCronJob) { a.Spec.StartingDeadlineSeconds = ptr.To[int64](-1) }, "spec.startingDeadlineSeconds"},
		{"a negative success limit", func(a *v1beta1.AdvancedCronJob) { a.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](-1) }, "spec.successfulJobsHistoryLimit"},
		{"a negative failure limit", func(a *v1beta1.AdvancedCronJob) { a.Spec.FailedJobsHistoryLimit = ptr.To[int32](-1) }, "spec.failedJobsHistoryLimit"},
		{"no template", func(a *v1beta1.AdvancedCronJob) { a.Spec.Template.JobTemplate = nil }, "spec.template"},
		{"two templates", func(a *v1beta1.AdvancedCronJob) { a.Spec.Template.BroadcastJobTemplate = broadcastTemplate() }, "spec.template"},
		{"a job whose pods restart Always", func(a *v1beta1.AdvancedCronJob) {
			a.Spec.Template.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}, "spec.template.jobTemplate.spec.template.spec.restartPolicy"},
		{"a negative job parallelism", func(a *v1beta1.AdvancedCronJob) {
			a.Spec.Template.JobTemplate.Spec.Parallelism = ptr.To[int32](-1)
		}, "spec.template.jobTemplate.spec.parallelism"},
		{"a bad job label", func(a *v1beta1.AdvancedCronJob) {
			a.Spec.Template.JobTemplate.Labels = map[string]string{"a": "b c"}
		}, "spec.template.jobTemplate.metadata.labels"},
		{"a broadcast job with ttl and Never", func(a *v1beta1.AdvancedCronJob) {
			b := broadcastTemplate()
			b.Spec.CompletionPolicy.Type = v1beta1.BroadcastJobCompletionPolicyNever
			a.Spec.Template = v1beta1.AdvancedCronJobTemplate{BroadcastJobTemplate: b}
		}, "spec.template.broadcastJobTemplate.spec.completionPolicy.ttlSecondsAfterFinished"},
		{"a broadcast job whose pods restart Always", func(a *v1beta1.AdvancedCronJob) {
			b := broadcastTemplate()
			b.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
			a.Spec.Template = v1beta1.AdvancedCronJobTemplate{BroadcastJobTemplate: b}
		}, "spec.template.broadcastJobTemplate.spec.template.spec.restartPolicy"},
		{"an image list without images", func(a *v1beta1.AdvancedCronJob) {
			a.Spec.Template = v1beta1.AdvancedCronJobTemplate{ImageListPullJobTemplate: &v1beta1.AdvancedCronJobImageListPullJobTemplate{}}
		}, "spec.template.imageListPullJobTemplate.spec.images"},
	}
	for _, c := range invalid {
		acj := validCronJob()
		c.mutate(acj)
		if got := errorFields(ValidateAdvancedCronJob(acj)); !slices.Contains(got, c.field) {
			t.Errorf("%s: errors at %v, want one at %s", c.name, got, c.field)
		}
	}
}

// TestValidateAdvancedCronJobUpdate: the schedule and run settings may change; the template may not.
func TestValidateAdvancedCronJobUpdate(t *testing.T) {
	old := validCronJob()
	settings := old.DeepCopy()
	settings.Spec.Schedule, settings.Spec.TimeZone, settings.Spec.Paused = "0 * * * *", ptr.To("Europe/Paris"), ptr.To(true)
	settings.Spec.ConcurrencyPolicy, settings.Spec.StartingDeadlineSeconds = v1beta1.AdvancedCronJobForbidConcurrent, ptr.To[int64](30)
	settings.Spec.SuccessfulJobsHistoryLimit, settings.Spec.FailedJobsHistoryLimit = ptr.To[int32](0), ptr.To[int32](5)
	if errs := ValidateAdvancedCronJobUpdate(settings, old); len(errs) > 0 {
		t.Errorf("changed settings: %v", errs)
	}
	tmpl := old.DeepCopy()
	tmpl.Spec.Template.JobTemplate.Spec.Template.Spec.Containers[0].Image = "busybox:2"
	if got := errorFields(ValidateAdvancedCronJobUpdate(tmpl, old)); !slices.Equal(got, []string{"spec.template"}) {
		t.Errorf("changed template: errors at %v", got)
	}
	legacy := old.DeepCopy() // admitted by OpenKruise, whose webhook has no restartPolicy rule
	legacy.Spec.Template.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	paused := legacy.DeepCopy()
	paused.Spec.Paused = ptr.To(true)
	if errs := ValidateAdvancedCronJobUpdate(paused, legacy); len(errs) > 0 {
		t.Errorf("pausing a cron job admitted under older rules: %v", errs)
	}
	bad := old.DeepCopy()
	bad.Spec.Schedule = "nope"
	if got := errorFields(ValidateAdvancedCronJobUpdate(bad, old)); !slices.Equal(got, []string{"spec.schedule"}) {
		t.Errorf("bad schedule: errors at %v", got)
	}
}

// recordTemplates records the templates it is asked to check and refuses them all.
type recordTemplates struct{ paths *[]string }

func (r recordTemplates) Check(_ context.Context, _ string, _ *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	*r.paths = append(*r.paths, p.String())
	return field.ErrorList{field.Invalid(p.Child("spec"), nil, "refused by the dry run")}
}

// TestAdvancedCronJobValidator: both versions are validated as v1beta1; the pod template goes to
// the dry run on create only; a v1alpha1 update cannot drop a v1beta1 imageListPullJobTemplate.
func TestAdvancedCronJobValidator(t *testing.T) {
	ctx := context.Background()
	var paths []string
	beta := advancedCronJobValidator[*v1beta1.AdvancedCronJob]{templates: recordTemplates{&paths},
		toV1beta1: func(o *v1beta1.AdvancedCronJob) *v1beta1.AdvancedCronJob { return o }}
	alpha := advancedCronJobValidator[*v1alpha1.AdvancedCronJob]{templates: recordTemplates{&paths}, toV1beta1: v1alpha1.AdvancedCronJobToV1beta1}

	_, err := beta.ValidateCreate(ctx, validCronJob())
	if !apierrors.IsInvalid(err) || !slices.Equal(paths, []string{"spec.template.jobTemplate.spec.template"}) {
		t.Errorf("create: %v, templates checked %v", err, paths)
	}
	paths = nil
	old := validCronJob()
	upd := old.DeepCopy()
	upd.Spec.Paused = ptr.To(true)
	if _, err := beta.ValidateUpdate(ctx, old, upd); err != nil || len(paths) != 0 {
		t.Errorf("update: %v, templates checked %v", err, paths)
	}

	a := v1alpha1.AdvancedCronJobFromV1beta1(validCronJob())
	a.Spec.Template.JobTemplate = nil
	a.Spec.Template.BroadcastJobTemplate = v1alpha1.AdvancedCronJobFromV1beta1(&v1beta1.AdvancedCronJob{Spec: v1beta1.AdvancedCronJobSpec{
		Template: v1beta1.AdvancedCronJobTemplate{BroadcastJobTemplate: broadcastTemplate()}}}).Spec.Template.BroadcastJobTemplate
	_, err = alpha.ValidateCreate(ctx, a)
	if !apierrors.IsInvalid(err) || !slices.Equal(paths, []string{"spec.template.broadcastJobTemplate.spec.template"}) {
		t.Errorf("v1alpha1 create: %v, templates checked %v", err, paths)
	}
	w, err := alpha.ValidateUpdate(ctx, a, a)
	if err != nil || len(w) != 0 {
		t.Errorf("v1alpha1 update: %v %v", w, err)
	}
	a.Spec.Schedule = "CRON_TZ=UTC 0 9 * * *"
	if w, _ := alpha.ValidateUpdate(ctx, a, a); len(w) != 1 {
		t.Errorf("zone prefix: warnings %v", w)
	}
	// A cron job stored with an imageListPullJobTemplate reads as v1alpha1 without any template;
	// writing it back through v1alpha1 would lose the template, and is refused.
	lost := a.DeepCopy()
	lost.Spec.Template = v1alpha1.AdvancedCronJobTemplate{}
	if _, err := alpha.ValidateUpdate(ctx, lost, lost); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template") {
		t.Errorf("v1alpha1 update without a template: %v", err)
	}
}

// TestAdvancedCronJobConversion: every v1alpha1 field survives v1alpha1 → v1beta1 → v1alpha1;
// v1beta1's imageListPullJobTemplate does not reach v1alpha1 (as with the CRD's strategy None).
func TestAdvancedCronJobConversion(t *testing.T) {
	beta := validCronJob()
	beta.Spec.Template.JobTemplate = nil
	beta.Spec.Template.BroadcastJobTemplate = broadcastTemplate()
	beta.Spec.Template.BroadcastJobTemplate.Labels = map[string]string{"x": "y"}
	beta.Spec.TimeZone, beta.Spec.StartingDeadlineSeconds = ptr.To("UTC"), ptr.To[int64](10)
	now := metav1.Now().Rfc3339Copy()
	beta.Status = v1beta1.AdvancedCronJobStatus{Type: v1beta1.AdvancedCronJobBroadcastJobTemplateKind, LastScheduleTime: &now,
		Active: []corev1.ObjectReference{{Kind: "BroadcastJob", Name: "nightly-1"}}}
	alpha := v1alpha1.AdvancedCronJobFromV1beta1(beta)
	if back := v1alpha1.AdvancedCronJobToV1beta1(alpha); !apiequality.Semantic.DeepEqual(back, beta) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, beta)
	}
	if again := v1alpha1.AdvancedCronJobFromV1beta1(v1alpha1.AdvancedCronJobToV1beta1(alpha)); !apiequality.Semantic.DeepEqual(again, alpha) {
		t.Errorf("v1alpha1 round trip:\n got %+v\nwant %+v", again, alpha)
	}
	beta.Spec.Template = v1beta1.AdvancedCronJobTemplate{ImageListPullJobTemplate: &v1beta1.AdvancedCronJobImageListPullJobTemplate{
		Spec: v1beta1.ImageListPullJobSpec{Images: []string{"a:1"}}}}
	if a := v1alpha1.AdvancedCronJobFromV1beta1(beta); a.Spec.Template.JobTemplate != nil || a.Spec.Template.BroadcastJobTemplate != nil {
		t.Errorf("imageListPullJobTemplate in v1alpha1: %+v", a.Spec.Template)
	}
}
