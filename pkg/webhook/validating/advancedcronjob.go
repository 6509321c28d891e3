package validating

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/cronschedule"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

const advancedCronJobKind = "AdvancedCronJob"

// Paths of the AdvancedCronJob validating webhooks, one per served version.
const (
	AdvancedCronJobV1alpha1Path = "/validate-apps-kruise-io-v1alpha1-advancedcronjob"
	AdvancedCronJobV1beta1Path  = "/validate-apps-kruise-io-v1beta1-advancedcronjob"
)

// AdvancedCronJobPodOwnerNameMaxLength is the longest name of a cron job whose children own pods
// (Jobs, BroadcastJobs): a child is named <name>-<10-digit Unix time>, and its pods carry that
// name in a label value, at most 63 characters (Kubernetes limits a CronJob's name to 52 alike).
const AdvancedCronJobPodOwnerNameMaxLength = 52

// registerAdvancedCronJobs adds the AdvancedCronJob validating webhooks: a v1alpha1 object is
// read as v1beta1 (the stored version; the versions differ only by imageListPullJobTemplate) and
// validated as such, so the rules exist once. templates checks the pod templates of jobTemplate
// and broadcastJobTemplate (nil: not checked beyond this file's rules).
func registerAdvancedCronJobs(srv webhook.Server, scheme *runtime.Scheme, templates PodTemplateChecker) {
	mount.Admission(srv, AdvancedCronJobV1beta1Path, admission.WithValidator[*v1beta1.AdvancedCronJob](scheme,
		advancedCronJobValidator[*v1beta1.AdvancedCronJob]{templates: templates, toV1beta1: func(o *v1beta1.AdvancedCronJob) *v1beta1.AdvancedCronJob { return o }}))
	mount.Admission(srv, AdvancedCronJobV1alpha1Path, admission.WithValidator[*v1alpha1.AdvancedCronJob](scheme,
		advancedCronJobValidator[*v1alpha1.AdvancedCronJob]{templates: templates, toV1beta1: v1alpha1.AdvancedCronJobToV1beta1}))
}

// advancedCronJobValidator adapts ValidateAdvancedCronJob and ValidateAdvancedCronJobUpdate to
// controller-runtime for one version, and checks the pod templates as the API server would check
// the pods.
type advancedCronJobValidator[T client.Object] struct {
	templates PodTemplateChecker
	toV1beta1 func(T) *v1beta1.AdvancedCronJob
}

// ValidateCreate rejects an invalid new AdvancedCronJob.
func (v advancedCronJobValidator[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	acj := v.toV1beta1(obj)
	errs := ValidateAdvancedCronJob(acj)
	if len(errs) == 0 && v.templates != nil {
		errs = v.checkTemplates(ctx, acj)
	}
	return advancedCronJobWarnings(acj), invalid(advancedCronJobKind, acj.Name, errs)
}

// ValidateUpdate rejects an invalid AdvancedCronJob or a change of a field OpenKruise keeps
// fixed. The templates cannot change, so they are not checked again.
func (v advancedCronJobValidator[T]) ValidateUpdate(_ context.Context, oldObj, newObj T) (admission.Warnings, error) {
	acj := v.toV1beta1(newObj)
	return advancedCronJobWarnings(acj), invalid(advancedCronJobKind, acj.Name, ValidateAdvancedCronJobUpdate(acj, v.toV1beta1(oldObj)))
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (advancedCronJobValidator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// checkTemplates checks the pod template a Job or BroadcastJob child would run.
func (v advancedCronJobValidator[T]) checkTemplates(ctx context.Context, acj *v1beta1.AdvancedCronJob) field.ErrorList {
	p := field.NewPath("spec", "template")
	switch t := acj.Spec.Template; {
	case t.JobTemplate != nil:
		return v.templates.Check(ctx, acj.Namespace, &t.JobTemplate.Spec.Template, p.Child("jobTemplate", "spec", "template"))
	case t.BroadcastJobTemplate != nil:
		return v.templates.Check(ctx, acj.Namespace, &t.BroadcastJobTemplate.Spec.Template, p.Child("broadcastJobTemplate", "spec", "template"))
	}
	return nil
}

// advancedCronJobWarnings: a zone prefix in the schedule works but is not officially supported.
func advancedCronJobWarnings(acj *v1beta1.AdvancedCronJob) admission.Warnings {
	if cronschedule.HasZonePrefix(acj.Spec.Schedule) {
		return admission.Warnings{"spec.schedule: a TZ= or CRON_TZ= prefix is not officially supported; set spec.timeZone instead"}
	}
	return nil
}

// ValidateAdvancedCronJob checks a new AdvancedCronJob: its name, so that its children's names
// fit, and its spec.
func ValidateAdvancedCronJob(acj *v1beta1.AdvancedCronJob) field.ErrorList {
	np := field.NewPath("metadata", "name")
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(acj.Name) {
		errs = append(errs, field.Invalid(np, acj.Name, msg))
	}
	if t := acj.Spec.Template; (t.JobTemplate != nil || t.BroadcastJobTemplate != nil) && len(acj.Name) > AdvancedCronJobPodOwnerNameMaxLength {
		e := field.TooLong(np, acj.Name, AdvancedCronJobPodOwnerNameMaxLength)
		e.Detail = fmt.Sprintf("must be no more than %d characters with a jobTemplate or broadcastJobTemplate: each run's job is named "+
			"<name>-<Unix time> and its pods carry that name in a label (at most 63 characters)", AdvancedCronJobPodOwnerNameMaxLength)
		errs = append(errs, e)
	}
	return append(errs, validateAdvancedCronJobSpec(&acj.Spec, field.NewPath("spec"), true)...)
}

// ValidateAdvancedCronJobUpdate checks a changed AdvancedCronJob: its spec, and that only the
// schedule and run settings changed (OpenKruise's rule: the template is fixed once created). The
// fixed template's content is not checked again, so a cron job admitted under older rules (or by
// OpenKruise) can still be paused or rescheduled.
func ValidateAdvancedCronJobUpdate(acj, old *v1beta1.AdvancedCronJob) field.ErrorList {
	errs := validateAdvancedCronJobSpec(&acj.Spec, field.NewPath("spec"), false)
	fixed := acj.Spec.DeepCopy()
	fixed.Schedule, fixed.TimeZone, fixed.ConcurrencyPolicy = old.Spec.Schedule, old.Spec.TimeZone, old.Spec.ConcurrencyPolicy
	fixed.StartingDeadlineSeconds, fixed.Paused = old.Spec.StartingDeadlineSeconds, old.Spec.Paused
	fixed.SuccessfulJobsHistoryLimit, fixed.FailedJobsHistoryLimit = old.Spec.SuccessfulJobsHistoryLimit, old.Spec.FailedJobsHistoryLimit
	if !apiequality.Semantic.DeepEqual(*fixed, old.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "template"), "may not be changed: of the spec only schedule, timeZone, "+
			"concurrencyPolicy, startingDeadlineSeconds, successfulJobsHistoryLimit, failedJobsHistoryLimit and paused may change"))
	}
	return errs
}

// validateAdvancedCronJobSpec checks spec; the templates' content only when templates is set.
func validateAdvancedCronJobSpec(spec *v1beta1.AdvancedCronJobSpec, p *field.Path, templates bool) field.ErrorList {
	errs := validateCronSchedule(spec.Schedule, spec.TimeZone, p)
	switch spec.ConcurrencyPolicy {
	case "", v1beta1.AdvancedCronJobAllowConcurrent, v1beta1.AdvancedCronJobForbidConcurrent, v1beta1.AdvancedCronJobReplaceConcurrent:
	default:
		errs = append(errs, field.NotSupported(p.Child("concurrencyPolicy"), spec.ConcurrencyPolicy, []string{string(v1beta1.AdvancedCronJobAllowConcurrent),
			string(v1beta1.AdvancedCronJobForbidConcurrent), string(v1beta1.AdvancedCronJobReplaceConcurrent)}))
	}
	if v := spec.StartingDeadlineSeconds; v != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(*v, p.Child("startingDeadlineSeconds"))...)
	}
	if v := spec.SuccessfulJobsHistoryLimit; v != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*v), p.Child("successfulJobsHistoryLimit"))...)
	}
	if v := spec.FailedJobsHistoryLimit; v != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*v), p.Child("failedJobsHistoryLimit"))...)
	}
	return append(errs, validateCronTemplate(&spec.Template, p.Child("template"), templates)...)
}

// validateCronSchedule: the schedule parses as standard cron (TZ=/CRON_TZ= prefix allowed, as
// in OpenKruise, but not together with timeZone), and timeZone is an explicit IANA zone.
func validateCronSchedule(schedule string, timeZone *string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	sp := p.Child("schedule")
	if schedule == "" {
		errs = append(errs, field.Required(sp, "a cron schedule, such as \"*/5 * * * *\""))
	} else if _, err := cronschedule.Parse(schedule); err != nil {
		errs = append(errs, field.Invalid(sp, schedule, err.Error()))
	}
	if cronschedule.HasZonePrefix(schedule) && timeZone != nil {
		errs = append(errs, field.Invalid(sp, schedule, "a TZ= or CRON_TZ= prefix may not be combined with spec.timeZone"))
	}
	if timeZone == nil {
		return errs
	}
	zp := p.Child("timeZone")
	switch tz := *timeZone; {
	case tz == "":
		errs = append(errs, field.Invalid(zp, tz, "must be unset or an IANA time zone name"))
	case strings.EqualFold(tz, "Local"):
		errs = append(errs, field.Invalid(zp, tz, "must be an explicit IANA time zone name (https://www.iana.org/time-zones), not the manager's local zone"))
	default:
		if _, err := time.LoadLocation(tz); err != nil {
			errs = append(errs, field.Invalid(zp, tz, err.Error()))
		}
	}
	return errs
}

// validateCronTemplate: exactly one template, each (when deep) valid as far as the job it makes
// must be.
func validateCronTemplate(t *v1beta1.AdvancedCronJobTemplate, p *field.Path, deep bool) field.ErrorList {
	var set []string
	var errs field.ErrorList
	if t.JobTemplate != nil {
		set = append(set, "jobTemplate")
		if deep {
			errs = append(errs, validateCronJobTemplate(t.JobTemplate, p.Child("jobTemplate"))...)
		}
	}
	if t.BroadcastJobTemplate != nil {
		set = append(set, "broadcastJobTemplate")
		if deep {
			errs = append(errs, validateCronBroadcastJobTemplate(t.BroadcastJobTemplate, p.Child("broadcastJobTemplate"))...)
		}
	}
	if t.ImageListPullJobTemplate != nil {
		set = append(set, "imageListPullJobTemplate")
		if tp := p.Child("imageListPullJobTemplate"); deep {
			errs = append(errs, validateChildMeta(t.ImageListPullJobTemplate.Labels, t.ImageListPullJobTemplate.Annotations, tp.Child("metadata"))...)
			errs = append(errs, ValidateImageListPullJobSpec(&t.ImageListPullJobTemplate.Spec, tp.Child("spec"))...)
		}
	}
	switch len(set) {
	case 0:
		return append(errs, field.Required(p, "one of jobTemplate, broadcastJobTemplate or imageListPullJobTemplate"))
	case 1:
		return errs
	}
	return append(errs, field.Forbidden(p, fmt.Sprintf("exactly one of jobTemplate, broadcastJobTemplate or imageListPullJobTemplate may be set, not %s",
		strings.Join(set, " and "))))
}

func validateChildMeta(labels, annotations map[string]string, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(labels, p.Child("labels"))
	return append(errs, apivalidation.ValidateAnnotations(annotations, p.Child("annotations"))...)
}

// validateCronJobTemplate: what the API server would refuse of the Job at each run, beyond the
// pod template's own validity (the dry run): counts that are negative, a pod restartPolicy other
// than Never or OnFailure.
func validateCronJobTemplate(t *batchv1.JobTemplateSpec, p *field.Path) field.ErrorList {
	errs := validateChildMeta(t.Labels, t.Annotations, p.Child("metadata"))
	sp := p.Child("spec")
	for name, v := range map[string]*int32{"parallelism": t.Spec.Parallelism, "completions": t.Spec.Completions,
		"backoffLimit": t.Spec.BackoffLimit, "ttlSecondsAfterFinished": t.Spec.TTLSecondsAfterFinished} {
		if v != nil {
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*v), sp.Child(name))...)
		}
	}
	if v := t.Spec.ActiveDeadlineSeconds; v != nil && *v <= 0 {
		errs = append(errs, field.Invalid(sp.Child("activeDeadlineSeconds"), *v, "must be greater than 0"))
	}
	return append(errs, validateRunToCompletion(&t.Spec.Template, sp.Child("template"))...)
}

// validateCronBroadcastJobTemplate: what a BroadcastJob's validation would refuse at each run,
// beyond the pod template's own validity (the dry run).
func validateCronBroadcastJobTemplate(t *v1beta1.AdvancedCronJobBroadcastJobTemplate, p *field.Path) field.ErrorList {
	errs := validateChildMeta(t.Labels, t.Annotations, p.Child("metadata"))
	return append(errs, ValidateBroadcastJobSpec(&t.Spec, p.Child("spec"))...)
}

// validateRunToCompletion: a job's pods end, so their restartPolicy is Never or OnFailure.
func validateRunToCompletion(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	switch t.Spec.RestartPolicy {
	case corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure:
		return nil
	}
	return field.ErrorList{field.NotSupported(p.Child("spec", "restartPolicy"), t.Spec.RestartPolicy,
		[]string{string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)})}
}
