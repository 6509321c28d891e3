package validating

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-imagepulljob,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=imagepulljobs,verbs=create;update,versions=v1alpha1,name=vimagepulljob-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1beta1-imagepulljob,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=imagepulljobs,verbs=create;update,versions=v1beta1,name=vimagepulljob-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-imagelistpulljob,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=imagelistpulljobs,verbs=create;update,versions=v1alpha1,name=vimagelistpulljob-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1beta1-imagelistpulljob,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=imagelistpulljobs,verbs=create;update,versions=v1beta1,name=vimagelistpulljob-v1beta1.apps.kruise.io,admissionReviewVersions=v1

// registerPullJobs adds the ImagePullJob and ImageListPullJob validating webhooks (both versions;
// their schemas are the same, so both are checked as v1beta1).
func registerPullJobs(srv webhook.Server, scheme *runtime.Scheme) {
	pull := func(o client.Object) (string, field.ErrorList) {
		j := &v1beta1.ImagePullJob{}
		if err := asV1beta1(o, j); err != nil {
			return "", field.ErrorList{field.InternalError(nil, err)}
		}
		return j.Spec.Image, ValidateImagePullJobSpec(&j.Spec, field.NewPath("spec"))
	}
	list := func(o client.Object) (string, field.ErrorList) {
		j := &v1beta1.ImageListPullJob{}
		if err := asV1beta1(o, j); err != nil {
			return "", field.ErrorList{field.InternalError(nil, err)}
		}
		return strings.Join(j.Spec.Images, ","), ValidateImageListPullJobSpec(&j.Spec, field.NewPath("spec"))
	}
	mount.Admission(srv, "/validate-apps-kruise-io-v1alpha1-imagepulljob", admission.WithValidator[*v1alpha1.ImagePullJob](scheme,
		jobValidator[*v1alpha1.ImagePullJob]{kind: "ImagePullJob", check: pull, immutable: "image"}))
	mount.Admission(srv, "/validate-apps-kruise-io-v1beta1-imagepulljob", admission.WithValidator[*v1beta1.ImagePullJob](scheme,
		jobValidator[*v1beta1.ImagePullJob]{kind: "ImagePullJob", check: pull, immutable: "image"}))
	mount.Admission(srv, "/validate-apps-kruise-io-v1alpha1-imagelistpulljob", admission.WithValidator[*v1alpha1.ImageListPullJob](scheme,
		jobValidator[*v1alpha1.ImageListPullJob]{kind: "ImageListPullJob", check: list}))
	mount.Admission(srv, "/validate-apps-kruise-io-v1beta1-imagelistpulljob", admission.WithValidator[*v1beta1.ImageListPullJob](scheme,
		jobValidator[*v1beta1.ImageListPullJob]{kind: "ImageListPullJob", check: list}))
}

// asV1beta1 converts a pull job of either version into out (the two versions share a schema).
func asV1beta1(in client.Object, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// jobValidator validates pull jobs with check; the field named immutable (spec.<immutable>, as
// returned by check) may not change.
type jobValidator[T client.Object] struct {
	kind      string
	check     func(client.Object) (string, field.ErrorList)
	immutable string
}

func (v jobValidator[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	_, errs := v.check(obj)
	return nil, invalid(v.kind, obj.GetName(), errs)
}

func (v jobValidator[T]) ValidateUpdate(_ context.Context, oldObj, newObj T) (admission.Warnings, error) {
	key, errs := v.check(newObj)
	if v.immutable != "" {
		if oldKey, _ := v.check(oldObj); oldKey != key {
			errs = append(errs, field.Forbidden(field.NewPath("spec", v.immutable), "may not be changed; create a new job"))
		}
	}
	return nil, invalid(v.kind, newObj.GetName(), errs)
}

func (jobValidator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// ValidateImage checks an image reference a pull job pulls: a valid reference with a tag or none
// (latest); digests are refused, since NodeImage names pulls by tag.
func ValidateImage(image string, p *field.Path) field.ErrorList {
	if image == "" {
		return field.ErrorList{field.Required(p, "the image to pull")}
	}
	if strings.Contains(image, "@") {
		return field.ErrorList{field.Invalid(p, image, "digest references are not supported; name the image by tag")}
	}
	if _, err := name.NewTag(image, name.WeakValidation); err != nil {
		return field.ErrorList{field.Invalid(p, image, fmt.Sprintf("not an image reference: %v", err))}
	}
	return nil
}

// ValidateImagePullJobSpec checks an ImagePullJob spec.
func ValidateImagePullJobSpec(spec *v1beta1.ImagePullJobSpec, p *field.Path) field.ErrorList {
	errs := ValidateImage(spec.Image, p.Child("image"))
	return append(errs, validatePullJobTemplate(&spec.ImagePullJobTemplate, p)...)
}

// ValidateImageListPullJobSpec checks an ImageListPullJob spec.
func ValidateImageListPullJobSpec(spec *v1beta1.ImageListPullJobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Images) == 0 {
		errs = append(errs, field.Required(p.Child("images"), "at least one image"))
	}
	seen := map[string]bool{}
	for i, img := range spec.Images {
		errs = append(errs, ValidateImage(img, p.Child("images").Index(i))...)
		if seen[img] {
			errs = append(errs, field.Duplicate(p.Child("images").Index(i), img))
		}
		seen[img] = true
	}
	return append(errs, validatePullJobTemplate(&spec.ImagePullJobTemplate, p)...)
}

func validatePullJobTemplate(t *v1beta1.ImagePullJobTemplate, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	opts := metav1validation.LabelSelectorValidationOptions{}
	if t.Selector != nil {
		if t.PodSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("podSelector"), "may not be set together with spec.selector"))
		}
		if ls := t.Selector.LabelSelector; len(t.Selector.Names) > 0 && (len(ls.MatchLabels) > 0 || len(ls.MatchExpressions) > 0) {
			errs = append(errs, field.Forbidden(p.Child("selector", "names"), "may not be set together with a label selector; use one or the other"))
		}
		for i, n := range t.Selector.Names {
			for _, msg := range validation.IsDNS1123Subdomain(n) {
				errs = append(errs, field.Invalid(p.Child("selector", "names").Index(i), n, msg))
			}
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(&t.Selector.LabelSelector, opts, p.Child("selector"))...)
	}
	if t.PodSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(&t.PodSelector.LabelSelector, opts, p.Child("podSelector"))...)
	}
	for i, s := range t.PullSecrets {
		for _, msg := range validation.IsDNS1123Subdomain(s) {
			errs = append(errs, field.Invalid(p.Child("pullSecrets").Index(i), s, msg))
		}
	}
	if par := t.Parallelism; par != nil {
		fp := p.Child("parallelism")
		switch {
		case par.Type == intstr.Int && par.IntVal < 0:
			errs = append(errs, field.Invalid(fp, par.IntVal, "must be at least 0 (0 pauses the job)"))
		case par.Type == intstr.String:
			if v, err := intstr.GetScaledValueFromIntOrPercent(par, 100, true); err != nil || !strings.HasSuffix(par.StrVal, "%") || v < 0 || v > 100 {
				errs = append(errs, field.Invalid(fp, par.StrVal, "must be a count or a percentage between 0% and 100%"))
			}
		}
	}
	if pp := t.PullPolicy; pp != nil {
		if pp.TimeoutSeconds != nil && *pp.TimeoutSeconds <= 0 {
			errs = append(errs, field.Invalid(p.Child("pullPolicy", "timeoutSeconds"), *pp.TimeoutSeconds, "must be positive"))
		}
		if pp.BackoffLimit != nil && *pp.BackoffLimit < 0 {
			errs = append(errs, field.Invalid(p.Child("pullPolicy", "backoffLimit"), *pp.BackoffLimit, "must be at least 0"))
		}
	}
	cp, cpp := t.CompletionPolicy, p.Child("completionPolicy")
	switch cp.Type {
	case v1beta1.ImagePullJobCompletionAlways, "":
		if cp.ActiveDeadlineSeconds != nil && *cp.ActiveDeadlineSeconds <= 0 {
			errs = append(errs, field.Invalid(cpp.Child("activeDeadlineSeconds"), *cp.ActiveDeadlineSeconds, "must be positive"))
		}
		if cp.TTLSecondsAfterFinished != nil && *cp.TTLSecondsAfterFinished < 0 {
			errs = append(errs, field.Invalid(cpp.Child("ttlSecondsAfterFinished"), *cp.TTLSecondsAfterFinished, "must be at least 0"))
		}
	case v1beta1.ImagePullJobCompletionNever:
		if cp.ActiveDeadlineSeconds != nil {
			errs = append(errs, field.Forbidden(cpp.Child("activeDeadlineSeconds"), "only applies to completionPolicy type Always"))
		}
		if cp.TTLSecondsAfterFinished != nil {
			errs = append(errs, field.Forbidden(cpp.Child("ttlSecondsAfterFinished"), "only applies to completionPolicy type Always"))
		}
	default:
		errs = append(errs, field.NotSupported(cpp.Child("type"), cp.Type, []string{string(v1beta1.ImagePullJobCompletionAlways), string(v1beta1.ImagePullJobCompletionNever)}))
	}
	switch t.ImagePullPolicy {
	case "", v1beta1.ImagePullJobPullAlways, v1beta1.ImagePullJobPullIfNotPresent:
	default:
		errs = append(errs, field.NotSupported(p.Child("imagePullPolicy"), t.ImagePullPolicy,
			[]string{string(v1beta1.ImagePullJobPullAlways), string(v1beta1.ImagePullJobPullIfNotPresent)}))
	}
	return errs
}
