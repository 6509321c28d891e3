package validating

import (
	"context"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/webhook/access"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// EphemeralJobPath is where the EphemeralJob validating webhook is served.
const EphemeralJobPath = "/validate-apps-kruise-io-v1alpha1-ephemeraljob"

// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1alpha1-ephemeraljob,mutating=false,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=ephemeraljobs,verbs=create;update,versions=v1alpha1,name=vephemeraljob-v1alpha1.apps.kruise.io,admissionReviewVersions=v1

// registerEphemeralJobs adds the EphemeralJob validating webhook.
func registerEphemeralJobs(srv webhook.Server, scheme *runtime.Scheme, checker *access.Checker) {
	mount.Admission(srv, EphemeralJobPath, admission.WithValidator[*v1alpha1.EphemeralJob](scheme, ephemeralJobValidator{access: checker}))
}

var ephemeralJobResource = v1alpha1.GroupVersion.WithResource("ephemeraljobs").GroupResource()

// ephemeralJobValidator also checks that the author (or the updater of the spec) may add
// ephemeral containers to the namespace's pods, which the job makes Kruise do.
type ephemeralJobValidator struct {
	access *access.Checker
}

func (v ephemeralJobValidator) ValidateCreate(ctx context.Context, obj *v1alpha1.EphemeralJob) (admission.Warnings, error) {
	if err := invalid("EphemeralJob", obj.Name, ValidateEphemeralJob(obj)); err != nil {
		return nil, err
	}
	return nil, v.access.Require(ctx, ephemeralJobResource, obj.Name, access.EphemeralJob(obj)...)
}

func (v ephemeralJobValidator) ValidateUpdate(ctx context.Context, old, obj *v1alpha1.EphemeralJob) (admission.Warnings, error) {
	if err := invalid("EphemeralJob", obj.Name, ValidateEphemeralJob(obj)); err != nil {
		return nil, err
	}
	if reflect.DeepEqual(old.Spec, obj.Spec) {
		return nil, nil
	}
	return nil, v.access.Require(ctx, ephemeralJobResource, obj.Name, access.EphemeralJob(obj)...)
}

func (ephemeralJobValidator) ValidateDelete(context.Context, *v1alpha1.EphemeralJob) (admission.Warnings, error) {
	return nil, nil
}

// ValidateEphemeralJob reports the problems of an EphemeralJob, each at its field's path:
// OpenKruise's (a selector that is set and valid; ephemeral containers the API server would
// accept, subPath mounts forbidden) and Kruise's additions (a selector that is not empty, at
// least one container, no negative count or duration, no env KRUISE_EJOB_ID of the user's).
func ValidateEphemeralJob(obj *v1alpha1.EphemeralJob) field.ErrorList {
	spec, path := &obj.Spec, field.NewPath("spec")
	var errs field.ErrorList
	switch sel := spec.Selector; {
	case sel == nil:
		errs = append(errs, field.Required(path.Child("selector"), "selector must be not empty"))
	case len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0:
		errs = append(errs, field.Invalid(path.Child("selector"), sel, "selector must be not empty: an empty selector would match every pod of the namespace"))
	default:
		errs = append(errs, metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, path.Child("selector"))...)
	}
	nonNegative := func(name string, v *int64) {
		if v != nil && *v < 0 {
			errs = append(errs, field.Invalid(path.Child(name), *v, "must be greater than or equal to 0"))
		}
	}
	nonNegative("replicas", int64Of(spec.Replicas))
	nonNegative("parallelism", int64Of(spec.Parallelism))
	nonNegative("activeDeadlineSeconds", spec.ActiveDeadlineSeconds)
	nonNegative("ttlSecondsAfterFinished", int64Of(spec.TTLSecondsAfterFinished))
	return append(errs, validateEphemeralContainers(spec.Template.EphemeralContainers, path.Child("template", "ephemeralContainers"))...)
}

func int64Of(v *int32) *int64 {
	if v == nil {
		return nil
	}
	n := int64(*v)
	return &n
}

// ephemeralContainerFields are the fields of an ephemeral container the API server accepts; any
// other field set is forbidden ("cannot be set for an Ephemeral Container").
var ephemeralContainerFields = sets.New("name", "image", "command", "args", "workingDir", "envFrom", "env", "volumeMounts",
	"volumeDevices", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin",
	"stdinOnce", "tty")

// validateEphemeralContainers checks the containers as the API server checks the ephemeral
// containers of a pod, as far as it can without the pod.
func validateEphemeralContainers(cs []corev1.EphemeralContainer, path *field.Path) field.ErrorList {
	if len(cs) == 0 {
		return field.ErrorList{field.Required(path, "at least one ephemeral container is required")}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	for i := range cs {
		c, p := &cs[i], path.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case seen.Has(c.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
			}
		}
		seen.Insert(c.Name)
		if c.TargetContainerName != "" {
			for _, msg := range validation.IsDNS1123Label(c.TargetContainerName) {
				errs = append(errs, field.Invalid(p.Child("targetContainerName"), c.TargetContainerName, msg))
			}
		}
		if strings.TrimSpace(c.Image) == "" {
			errs = append(errs, field.Required(p.Child("image"), ""))
		}
		errs = append(errs, forbiddenEphemeralFields(&c.EphemeralContainerCommon, p)...)
		errs = append(errs, oneOf(p.Child("imagePullPolicy"), string(c.ImagePullPolicy),
			string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever))...)
		errs = append(errs, oneOf(p.Child("terminationMessagePolicy"), string(c.TerminationMessagePolicy),
			string(corev1.TerminationMessageReadFile), string(corev1.TerminationMessageFallbackToLogsOnError))...)
		errs = append(errs, validateEphemeralEnv(c, p)...)
		for j, m := range c.VolumeMounts {
			mp := p.Child("volumeMounts").Index(j)
			if m.Name == "" {
				errs = append(errs, field.Required(mp.Child("name"), ""))
			}
			if m.MountPath == "" {
				errs = append(errs, field.Required(mp.Child("mountPath"), ""))
			}
			if m.SubPath != "" {
				errs = append(errs, field.Forbidden(mp.Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if m.SubPathExpr != "" {
				errs = append(errs, field.Forbidden(mp.Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
	}
	return errs
}

// forbiddenEphemeralFields reports each field set that ephemeral containers may not have (ports,
// resources, probes, lifecycle, restart and resize policies, and any field added later).
func forbiddenEphemeralFields(c *corev1.EphemeralContainerCommon, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	v, t := reflect.ValueOf(*c), reflect.TypeOf(*c)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if !ephemeralContainerFields.Has(name) && !v.Field(i).IsZero() {
			errs = append(errs, field.Forbidden(p.Child(name), "cannot be set for an Ephemeral Container"))
		}
	}
	return errs
}

// oneOf reports v when it is set and not one of allowed (the API server defaults it when unset).
func oneOf(p *field.Path, v string, allowed ...string) field.ErrorList {
	if v == "" || sets.New(allowed...).Has(v) {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, v, allowed)}
}

// validateEphemeralEnv checks env and envFrom as the API server does (relaxed env names: printable
// ASCII without '='), and refuses env KRUISE_EJOB_ID, which the controller sets.
func validateEphemeralEnv(c *corev1.EphemeralContainer, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for j, e := range c.Env {
		ep := p.Child("env").Index(j)
		switch {
		case e.Name == "":
			errs = append(errs, field.Required(ep.Child("name"), ""))
		case e.Name == v1alpha1.EphemeralContainerEnvKey:
			errs = append(errs, field.Forbidden(ep.Child("name"), "KRUISE_EJOB_ID is set by the controller to the job's UID"))
		default:
			for _, msg := range validation.IsRelaxedEnvVarName(e.Name) {
				errs = append(errs, field.Invalid(ep.Child("name"), e.Name, msg))
			}
		}
		if e.Value != "" && e.ValueFrom != nil {
			errs = append(errs, field.Invalid(ep.Child("valueFrom"), "", "may not be specified when `value` is not empty"))
		}
	}
	for j, e := range c.EnvFrom {
		if (e.ConfigMapRef == nil) == (e.SecretRef == nil) {
			errs = append(errs, field.Invalid(p.Child("envFrom").Index(j), "", "must specify one of: `configMapRef` or `secretRef`"))
		}
	}
	return errs
}
