package validating

import (
	"context"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// daemonSetKind names the Advanced DaemonSet in messages and errors.
const daemonSetKind = "DaemonSet"

// Paths of the Advanced DaemonSet validating webhooks, one per served version.
const (
	DaemonSetV1alpha1Path = "/validate-apps-kruise-io-v1alpha1-daemonset"
	DaemonSetV1beta1Path  = "/validate-apps-kruise-io-v1beta1-daemonset"
)

// ValidateDaemonSet reports every problem of a new Advanced DaemonSet (apps.kruise.io; a v1alpha1
// object is converted to v1beta1 first, so the rules exist once) as it would be stored after
// defaulting, each at the path of the offending field. It answers as OpenKruise v1.9.0's DaemonSet
// webhook does (pkg/webhook/daemonset/validating, validateDaemonSetSpecV1beta1 and what it calls),
// but for the differences listed below. An absent field is validated as the value the defaulting
// webhook gives it: with neither maxUnavailable nor maxSurge set, maxUnavailable 1; otherwise an
// absent one of the two is 0.
//
// The rules:
//   - spec.selector is required, not empty and valid, and selects the template's labels;
//   - the template as the other workloads' (containers with names and images, restartPolicy
//     Always, no activeDeadlineSeconds; the rest by the webhook's dry run of a pod, podtemplate.go);
//   - spec.minReadySeconds and spec.revisionHistoryLimit are ≥ 0;
//   - spec.updateStrategy.type is RollingUpdate or OnDelete; with OnDelete, rollingUpdate is not
//     read and not checked;
//   - rollingUpdate.maxUnavailable and .maxSurge: an integer ≥ 0 or a whole percentage of at most
//     100%; exactly one of them is non-zero (both non-zero is refused at maxSurge, both zero at
//     maxUnavailable: no pod could ever be updated);
//   - rollingUpdate.rollingUpdateType is Standard or InPlaceIfPossible, and maxSurge is 0 with
//     InPlaceIfPossible (a surge pod is created, never updated in place);
//   - rollingUpdate.partition: an integer ≥ 0 or a whole percentage of at most 100%;
//   - spec.lifecycle.inPlaceUpdate is refused (OpenKruise: the DaemonSet supports no
//     inPlaceUpdate hook); the other hooks are not checked, as the other workloads' are not.
//
// Where Kruise answers otherwise than OpenKruise v1.9.0 (refused where OpenKruise accepts a value
// the controller cannot read):
//   - a maxUnavailable, maxSurge or partition string that is no whole percentage (OpenKruise
//     reads "abc" as 0 without a word);
//   - rollingUpdate.selector must be a valid label selector (OpenKruise does not check it, and its
//     controller then fails on every sync);
//   - spec.burstReplicas: an integer ≥ 0 or a whole percentage (OpenKruise does not check it);
//   - an invalid pod template (OpenKruise checks it with Kubernetes' rules, Kruise by a dry run:
//     the same rules, of the API server's version);
//   - restartPolicy unset is accepted (pods get Always), as the takeover fixture shows
//     OpenKruise storing it.
func ValidateDaemonSet(obj *v1beta1.DaemonSet) field.ErrorList {
	spec := &obj.Spec
	path := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateSelector(daemonSetKind, spec.Selector, spec.Template.Labels, path)...)
	errs = append(errs, validateTemplateBasics(daemonSetKind, &spec.Template, path.Child("template"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), path.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*spec.RevisionHistoryLimit), path.Child("revisionHistoryLimit"))...)
	}
	if spec.BurstReplicas != nil {
		errs = append(errs, validateIntOrPercent(*spec.BurstReplicas, path.Child("burstReplicas"))...)
	}
	errs = append(errs, validateDaemonSetUpdateStrategy(&spec.UpdateStrategy, path.Child("updateStrategy"))...)
	if spec.Lifecycle != nil && spec.Lifecycle.InPlaceUpdate != nil {
		errs = append(errs, field.Forbidden(path.Child("lifecycle", "inPlaceUpdate"),
			"the Advanced DaemonSet has no inPlaceUpdate hook (OpenKruise refuses it as well)"))
	}
	return errs
}

// ValidateDaemonSetUpdate validates obj as ValidateDaemonSet does and checks the changes from old,
// as OpenKruise v1.9.0 does: spec.selector is immutable, every other field may change (template,
// updateStrategy, scaleStrategy, lifecycle, burstReplicas, minReadySeconds, revisionHistoryLimit).
//
// As for the other workloads, an update that leaves the spec unchanged (metadata only) is accepted
// even when the stored spec would now be refused, so an object OpenKruise stored can still be
// relabelled or finalized (OpenKruise validates it again).
func ValidateDaemonSetUpdate(obj, old *v1beta1.DaemonSet) field.ErrorList {
	if apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) {
		return nil
	}
	errs := ValidateDaemonSet(obj)
	return append(errs, apivalidation.ValidateImmutableField(obj.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
}

// validateDaemonSetUpdateStrategy checks spec.updateStrategy (see ValidateDaemonSet).
func validateDaemonSetUpdateStrategy(s *v1beta1.DaemonSetUpdateStrategy, p *field.Path) field.ErrorList {
	switch s.Type {
	case "", v1beta1.DaemonSetRollingUpdateStrategyType: // "" is defaulted to RollingUpdate
	case v1beta1.DaemonSetOnDeleteStrategyType:
		return nil
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), s.Type, []string{
			string(v1beta1.DaemonSetRollingUpdateStrategyType), string(v1beta1.DaemonSetOnDeleteStrategyType)})}
	}
	ru := s.RollingUpdate
	if ru == nil {
		return nil // every field defaulted
	}
	rp := p.Child("rollingUpdate")
	var errs field.ErrorList
	unavailable, surge := ru.MaxUnavailable, ru.MaxSurge
	if unavailable == nil && surge == nil {
		unavailable = ptr.To(intstr.FromInt32(1)) // the default
	}
	unavailableErrs := validateOptionalPercentAtMost100(unavailable, rp.Child("maxUnavailable"))
	surgeErrs := validateOptionalPercentAtMost100(surge, rp.Child("maxSurge"))
	errs = append(append(errs, unavailableErrs...), surgeErrs...)
	if len(unavailableErrs)+len(surgeErrs) == 0 {
		switch hasUnavailable, hasSurge := !isZeroIntOrPercent(unavailable), !isZeroIntOrPercent(surge); {
		case hasUnavailable && hasSurge:
			errs = append(errs, field.Invalid(rp.Child("maxSurge"), surge.String(),
				"may not be set when maxUnavailable is not 0: an update either surges or makes pods unavailable"))
		case !hasUnavailable && !hasSurge:
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), intOrPercentValue(unavailable, intstr.FromInt32(0)),
				"must not be 0 when maxSurge is 0: no pod could ever be updated"))
		case hasSurge && ru.Type == v1beta1.DaemonSetInplaceRollingUpdateType:
			errs = append(errs, field.Forbidden(rp.Child("maxSurge"),
				"must be 0 when rollingUpdateType is InPlaceIfPossible: a surge pod is created, never updated in place"))
		}
	}
	switch ru.Type {
	case "", v1beta1.DaemonSetStandardRollingUpdateType, v1beta1.DaemonSetInplaceRollingUpdateType: // "" is defaulted to Standard
	default:
		errs = append(errs, field.NotSupported(rp.Child("rollingUpdateType"), ru.Type, []string{
			string(v1beta1.DaemonSetStandardRollingUpdateType), string(v1beta1.DaemonSetInplaceRollingUpdateType)}))
	}
	errs = append(errs, validateOptionalPercentAtMost100(ru.Partition, rp.Child("partition"))...)
	if ru.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(ru.Selector, metav1validation.LabelSelectorValidationOptions{},
			rp.Child("selector"))...)
	}
	return errs
}

// validateOptionalPercentAtMost100 is validatePercentAtMost100 of a value that may be unset.
func validateOptionalPercentAtMost100(v *intstr.IntOrString, p *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	return validatePercentAtMost100(*v, p)
}

// isZeroIntOrPercent reports whether a valid int-or-percent v is unset, 0 or "0%".
func isZeroIntOrPercent(v *intstr.IntOrString) bool {
	if v == nil {
		return true
	}
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	return err == nil && n == 0
}

// daemonSetWarnings are the admission warnings of a valid DaemonSet: a surge update of pods with
// host ports stalls, as the new pod cannot be scheduled beside the old one on its node
// (kubernetes/kubernetes#106417; OpenKruise warns likewise in later versions).
func daemonSetWarnings(ds *v1beta1.DaemonSet) admission.Warnings {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type == v1beta1.DaemonSetOnDeleteStrategyType || ru == nil || isZeroIntOrPercent(ru.MaxSurge) {
		return nil
	}
	for _, list := range [][]corev1.Container{ds.Spec.Template.Spec.InitContainers, ds.Spec.Template.Spec.Containers} {
		for _, c := range list {
			for _, port := range c.Ports {
				if port.HostPort > 0 {
					return admission.Warnings{"spec.updateStrategy.rollingUpdate.maxSurge is set while container " + c.Name +
						" uses hostPort " + strconv.Itoa(int(port.HostPort)) +
						": the updated pod cannot run beside the old one on a node, so the rolling update will stall"}
				}
			}
		}
	}
	return nil
}

// registerDaemonSets adds the Advanced DaemonSet validating webhooks: a v1alpha1 object is
// converted to v1beta1 (the stored version) and validated as such, so the rules exist once.
func registerDaemonSets(srv webhook.Server, scheme *runtime.Scheme, templates PodTemplateChecker) {
	mount.Admission(srv, DaemonSetV1beta1Path, admission.WithValidator[*v1beta1.DaemonSet](scheme,
		daemonSetValidator[*v1beta1.DaemonSet]{templates: templates, toV1beta1: same[*v1beta1.DaemonSet]}))
	mount.Admission(srv, DaemonSetV1alpha1Path, admission.WithValidator[*v1alpha1.DaemonSet](scheme,
		daemonSetValidator[*v1alpha1.DaemonSet]{templates: templates, toV1beta1: toHub[*v1alpha1.DaemonSet, v1beta1.DaemonSet]}))
}

// daemonSetValidator adapts ValidateDaemonSet and ValidateDaemonSetUpdate to controller-runtime
// for one version of the DaemonSet, and checks the pod template as the API server would check its
// pods.
type daemonSetValidator[T client.Object] struct {
	templates PodTemplateChecker
	toV1beta1 func(T) (*v1beta1.DaemonSet, error)
}

// ValidateCreate rejects an invalid new DaemonSet.
func (v daemonSetValidator[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	ds, err := v.convert(obj)
	if err != nil {
		return nil, err
	}
	errs := ValidateDaemonSet(ds)
	if len(errs) == 0 && v.templates != nil {
		errs = v.templates.Check(ctx, ds.Namespace, &ds.Spec.Template, field.NewPath("spec", "template"))
	}
	if len(errs) > 0 {
		return nil, invalid(daemonSetKind, ds.Name, errs)
	}
	return daemonSetWarnings(ds), nil
}

// ValidateUpdate rejects an invalid DaemonSet or a forbidden change; the template is checked again
// only when it changed.
func (v daemonSetValidator[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	ds, err := v.convert(newObj)
	if err != nil {
		return nil, err
	}
	old, err := v.convert(oldObj)
	if err != nil {
		return nil, err
	}
	errs := ValidateDaemonSetUpdate(ds, old)
	if len(errs) == 0 && v.templates != nil && !apiequality.Semantic.DeepEqual(old.Spec.Template, ds.Spec.Template) {
		errs = v.templates.Check(ctx, ds.Namespace, &ds.Spec.Template, field.NewPath("spec", "template"))
	}
	if len(errs) > 0 {
		return nil, invalid(daemonSetKind, ds.Name, errs)
	}
	if apiequality.Semantic.DeepEqual(old.Spec, ds.Spec) {
		return nil, nil
	}
	return daemonSetWarnings(ds), nil
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (daemonSetValidator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// convert returns obj as v1beta1; an unreadable conversion annotation of a v1alpha1 object is
// refused at that annotation.
func (v daemonSetValidator[T]) convert(obj T) (*v1beta1.DaemonSet, error) {
	ds, err := v.toV1beta1(obj)
	if err != nil {
		p := field.NewPath("metadata", "annotations").Key(v1alpha1.ConversionV1beta1OnlyAnnotation)
		return nil, invalid(daemonSetKind, obj.GetName(), field.ErrorList{field.Invalid(p, field.OmitValueType{}, err.Error())})
	}
	return ds, nil
}
