package validating

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// Paths of the BroadcastJob validating webhooks, one per served version.
const (
	BroadcastJobV1alpha1Path = "/validate-apps-kruise-io-v1alpha1-broadcastjob"
	BroadcastJobV1beta1Path  = "/validate-apps-kruise-io-v1beta1-broadcastjob"
)

const broadcastJobKind = "BroadcastJob"

// registerBroadcastJobs adds the BroadcastJob validating webhooks: a v1alpha1 job is converted to
// v1beta1 (the stored version; the same fields) and validated as such.
func registerBroadcastJobs(srv webhook.Server, scheme *runtime.Scheme, templates PodTemplateChecker) {
	mount.Admission(srv, BroadcastJobV1beta1Path, admission.WithValidator[*v1beta1.BroadcastJob](scheme,
		broadcastJobValidator[*v1beta1.BroadcastJob]{templates: templates, toV1beta1: same[*v1beta1.BroadcastJob]}))
	mount.Admission(srv, BroadcastJobV1alpha1Path, admission.WithValidator[*v1alpha1.BroadcastJob](scheme,
		broadcastJobValidator[*v1alpha1.BroadcastJob]{templates: templates, toV1beta1: broadcastJobToV1beta1}))
}

// broadcastJobToV1beta1 converts a v1alpha1 BroadcastJob to v1beta1.
func broadcastJobToV1beta1(o *v1alpha1.BroadcastJob) (*v1beta1.BroadcastJob, error) {
	return v1alpha1.BroadcastJobToV1beta1(o), nil
}

// broadcastJobValidator adapts ValidateBroadcastJob to controller-runtime for one version, and
// checks the pod template as the API server would check its pods.
type broadcastJobValidator[T client.Object] struct {
	templates PodTemplateChecker
	toV1beta1 func(T) (*v1beta1.BroadcastJob, error)
}

// ValidateCreate rejects an invalid new BroadcastJob.
func (v broadcastJobValidator[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	job, err := v.toV1beta1(obj)
	if err != nil {
		return nil, err
	}
	errs := ValidateBroadcastJob(job)
	if len(errs) == 0 && v.templates != nil {
		errs = v.templates.Check(ctx, job.Namespace, &job.Spec.Template, field.NewPath("spec", "template"))
	}
	return nil, invalid(broadcastJobKind, job.Name, errs)
}

// ValidateUpdate rejects an invalid BroadcastJob (every field may change, as in OpenKruise; a
// changed template applies to the pods created afterwards). The template is checked against the
// API server again only when it changed.
func (v broadcastJobValidator[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	job, err := v.toV1beta1(newObj)
	if err != nil {
		return nil, err
	}
	old, err := v.toV1beta1(oldObj)
	if err != nil {
		return nil, err
	}
	errs := ValidateBroadcastJob(job)
	if len(errs) == 0 && v.templates != nil && !apiequality.Semantic.DeepEqual(old.Spec.Template, job.Spec.Template) {
		errs = v.templates.Check(ctx, job.Namespace, &job.Spec.Template, field.NewPath("spec", "template"))
	}
	return nil, invalid(broadcastJobKind, job.Name, errs)
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (broadcastJobValidator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// broadcastJobName is OpenKruise's rule for a BroadcastJob's name (its pods' generateName prefix).
var broadcastJobName = regexp.MustCompile(`^[a-zA-Z0-9\-]+$`)

const broadcastJobNameMaxLen = 63

// ValidateBroadcastJob checks a BroadcastJob as OpenKruise does (its name; ttlSecondsAfterFinished
// and activeDeadlineSeconds only with completionPolicy Always; restartPolicy Never or OnFailure;
// the job's own pod labels not preset), plus what OpenKruise leaves to the controller to trip on:
// known policy types, a parallelism that is a count or a percentage, non-negative numbers.
func ValidateBroadcastJob(job *v1beta1.BroadcastJob) field.ErrorList {
	var errs field.ErrorList
	np := field.NewPath("metadata", "name")
	if !broadcastJobName.MatchString(job.Name) {
		errs = append(errs, field.Invalid(np, job.Name, validation.RegexError(
			"BroadcastJob name must consist of alphanumeric characters or '-'", broadcastJobName.String(), "example-com")))
	}
	if len(job.Name) > broadcastJobNameMaxLen {
		errs = append(errs, field.TooLong(np, job.Name, broadcastJobNameMaxLen))
	}
	return append(errs, ValidateBroadcastJobSpec(&job.Spec, field.NewPath("spec"))...)
}

// ValidateBroadcastJobSpec checks a BroadcastJob spec (ValidateBroadcastJob), at path p.
func ValidateBroadcastJobSpec(spec *v1beta1.BroadcastJobSpec, p *field.Path) field.ErrorList {
	errs := validateBroadcastJobParallelism(spec.Parallelism, p.Child("parallelism"))
	errs = append(errs, validateBroadcastJobPolicies(spec, p)...)
	return append(errs, validateBroadcastJobTemplate(&spec.Template, p.Child("template"))...)
}

func validateBroadcastJobParallelism(par *intstr.IntOrString, p *field.Path) field.ErrorList {
	switch {
	case par == nil:
	case par.Type == intstr.Int && par.IntVal < 0:
		return field.ErrorList{field.Invalid(p, par.IntVal, "must be at least 0 (0 holds the job)")}
	case par.Type == intstr.String:
		if v, err := intstr.GetScaledValueFromIntOrPercent(par, 100, true); err != nil || !strings.HasSuffix(par.StrVal, "%") || v < 0 || v > 100 {
			return field.ErrorList{field.Invalid(p, par.StrVal, "must be a count or a percentage between 0% and 100%")}
		}
	}
	return nil
}

func validateBroadcastJobPolicies(spec *v1beta1.BroadcastJobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	cp, cpp := spec.CompletionPolicy, p.Child("completionPolicy")
	switch cp.Type {
	case v1beta1.BroadcastJobCompletionPolicyAlways, "":
		if cp.ActiveDeadlineSeconds != nil && *cp.ActiveDeadlineSeconds <= 0 {
			errs = append(errs, field.Invalid(cpp.Child("activeDeadlineSeconds"), *cp.ActiveDeadlineSeconds, "must be positive"))
		}
		if cp.TTLSecondsAfterFinished != nil && *cp.TTLSecondsAfterFinished < 0 {
			errs = append(errs, field.Invalid(cpp.Child("ttlSecondsAfterFinished"), *cp.TTLSecondsAfterFinished, "must be at least 0"))
		}
	case v1beta1.BroadcastJobCompletionPolicyNever:
		if cp.TTLSecondsAfterFinished != nil {
			errs = append(errs, field.Invalid(cpp.Child("ttlSecondsAfterFinished"), *cp.TTLSecondsAfterFinished,
				"ttlSecondsAfterFinished can just work with Always CompletionPolicyType"))
		}
		if cp.ActiveDeadlineSeconds != nil {
			errs = append(errs, field.Invalid(cpp.Child("activeDeadlineSeconds"), *cp.ActiveDeadlineSeconds,
				"activeDeadlineSeconds can just work with Always CompletionPolicyType"))
		}
	default:
		errs = append(errs, field.NotSupported(cpp.Child("type"), cp.Type, []string{
			string(v1beta1.BroadcastJobCompletionPolicyAlways), string(v1beta1.BroadcastJobCompletionPolicyNever)}))
	}
	fp := p.Child("failurePolicy")
	switch spec.FailurePolicy.Type {
	case v1beta1.BroadcastJobFailurePolicyTypeFailFast, v1beta1.BroadcastJobFailurePolicyTypeContinue, v1beta1.BroadcastJobFailurePolicyTypePause, "":
	default:
		errs = append(errs, field.NotSupported(fp.Child("type"), spec.FailurePolicy.Type, []string{
			string(v1beta1.BroadcastJobFailurePolicyTypeFailFast), string(v1beta1.BroadcastJobFailurePolicyTypeContinue),
			string(v1beta1.BroadcastJobFailurePolicyTypePause)}))
	}
	if spec.FailurePolicy.RestartLimit < 0 {
		errs = append(errs, field.Invalid(fp.Child("restartLimit"), spec.FailurePolicy.RestartLimit, "must be at least 0"))
	}
	return errs
}

// validateBroadcastJobTemplate checks the template beyond what the dry run of its pod checks:
// labels (not the job's own), containers with names and images, a job's restart policy.
func validateBroadcastJobTemplate(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	lp := p.Child("metadata", "labels")
	errs := metav1validation.ValidateLabels(t.Labels, lp)
	if t.Labels[appspub.BroadcastJobNameLabel] != "" || t.Labels[appspub.BroadcastJobControllerUIDLabel] != "" {
		errs = append(errs, field.Invalid(lp, t.Labels, fmt.Sprintf("%q and %q are not allowed to preset in pod labels",
			appspub.BroadcastJobNameLabel, appspub.BroadcastJobControllerUIDLabel)))
	}
	cp := p.Child("spec", "containers")
	if len(t.Spec.Containers) == 0 {
		errs = append(errs, field.Required(cp, "a pod needs at least one container"))
	}
	seen := map[string]bool{}
	for i := range t.Spec.Containers {
		errs = append(errs, validateContainerIdentity(&t.Spec.Containers[i], seen, cp.Index(i))...)
	}
	if rp := t.Spec.RestartPolicy; rp != corev1.RestartPolicyNever && rp != corev1.RestartPolicyOnFailure {
		errs = append(errs, field.Invalid(p.Child("spec", "restartPolicy"), rp, "pod restartPolicy can only be Never or OnFailure"))
	}
	return errs
}
