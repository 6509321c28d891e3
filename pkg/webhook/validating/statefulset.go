package validating

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
)

// statefulSetKind names the Advanced StatefulSet in messages and errors.
const statefulSetKind = "StatefulSet"

// maxMinReadySeconds is the largest spec.updateStrategy.rollingUpdate.minReadySeconds (5 minutes).
const maxMinReadySeconds = 300

// ValidateStatefulSet reports every problem of a new Advanced StatefulSet (apps.kruise.io; a
// v1alpha1 object is converted to v1beta1 first, so the rules exist once) as it would be stored
// after defaulting, each at the path of the offending field. It answers as OpenKruise v1.9.0's
// StatefulSet webhook does (pkg/webhook/statefulset/validating, validateStatefulSetSpec and what it
// calls), but for the differences listed below. An absent field is validated as the value the
// defaulting webhook gives it (replicas 1, podManagementPolicy OrderedReady, type RollingUpdate,
// partition 0, maxUnavailable 1, podUpdatePolicy ReCreate, retention Retain).
//
// The rules:
//   - spec.selector is required, not empty and valid, and selects the template's labels;
//   - spec.replicas, spec.revisionHistoryLimit and spec.ordinals.start are ≥ 0; spec.replicas is
//     at most ordinal.MaxReplicas (100000);
//   - spec.reserveOrdinals: each an integer ≥ 0 or a string "first-last" of digits, first ≤ last;
//     at most ordinal.MaxReserveEntries (100) entries reserving at most ordinal.MaxReservedOrdinals
//     (100000) ordinals in all;
//   - spec.serviceName, when set, is a DNS label (it becomes each pod's subdomain);
//   - spec.podManagementPolicy is OrderedReady or Parallel;
//   - spec.updateStrategy.type is RollingUpdate or OnDelete; rollingUpdate only with RollingUpdate;
//   - rollingUpdate: partition ≥ 0; minReadySeconds in [0, 300]; maxUnavailable an integer ≥ 1
//     or a whole percentage in (0%, 100%]; podUpdatePolicy ReCreate, InPlaceIfPossible or
//     InPlaceOnly, the last two only with the InPlaceUpdateReady readiness gate in the template;
//     inPlaceUpdateStrategy.gracePeriodSeconds ≥ 0; unorderedUpdate only with Parallel, its
//     priorityStrategy as the CloneSet's;
//   - spec.scaleStrategy.maxUnavailable as rollingUpdate's, and other than the integer 1 only with
//     Parallel;
//   - the template as the CloneSet's (containers with names and images, restartPolicy Always, no
//     activeDeadlineSeconds; the rest by the webhook's dry run of a pod, podtemplate.go);
//   - spec.volumeClaimTemplates: names unique DNS labels (a template volume of the same name is
//     replaced by the claim, as Kubernetes does), each a valid claim (statefulset_claims.go);
//     volumeMounts name a volume or a claim template;
//   - spec.persistentVolumeClaimRetentionPolicy: whenDeleted and whenScaled Retain or Delete;
//   - spec.volumeClaimUpdateStrategy.type OnPodRollingUpdate or OnPVCDelete;
//   - the lifecycle hooks are not checked, as the CloneSet's are not.
//
// Where Kruise answers otherwise than OpenKruise v1.9.0:
//   - B1: rollingUpdate.maxUnavailable above 1 is accepted with podManagementPolicy OrderedReady
//     (OpenKruise refuses anything but 1 there). Kruise follows Kubernetes' MaxUnavailableStatefulSet:
//     with OrderedReady, up to maxUnavailable pods are updated at once, still in ordinal order;
//   - maxUnavailable above 100% is refused, as Kubernetes refuses it (OpenKruise accepts it);
//   - refused where OpenKruise accepts an object whose pods or claims could never be created or
//     whose value the controller cannot use: an invalid pod template (OpenKruise checks only its
//     labels and annotations), an invalid claim template, a serviceName that is no DNS label,
//     negative revisionHistoryLimit, ordinals.start or gracePeriodSeconds, an ordinal above
//     2147483647 or a reserved range of more than 100000 ordinals (which the controller refuses),
//     an unknown volumeClaimUpdateStrategy.type;
//   - refused where OpenKruise accepts a spec that would make the controller allocate without
//     bound (issue 33): replicas above 100000, more than 100 reserveOrdinals entries, more than
//     100000 reserved ordinals in all (pkg/core/ordinal's bounds; the controller refuses to run such a
//     spec too, with condition InvalidSpec).
func ValidateStatefulSet(obj *v1beta1.StatefulSet) field.ErrorList {
	return validateStatefulSet(obj, nil)
}

// validateStatefulSet checks obj; old is the stored StatefulSet for an update, nil for a create.
// The claim templates' specs are checked only when they are new or changed, so a StatefulSet
// OpenKruise stored with a claim Kruise would refuse can still be scaled and updated.
func validateStatefulSet(obj, old *v1beta1.StatefulSet) field.ErrorList {
	spec := &obj.Spec
	path := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateSelector(statefulSetKind, spec.Selector, spec.Template.Labels, path)...)
	errs = append(errs, validateStatefulSetCounts(spec, path)...)
	errs = append(errs, validateReserveOrdinals(spec.ReserveOrdinals, path.Child("reserveOrdinals"))...)
	if spec.ServiceName != "" {
		for _, msg := range validation.IsDNS1123Label(spec.ServiceName) {
			errs = append(errs, field.Invalid(path.Child("serviceName"), spec.ServiceName, "it becomes each pod's subdomain: "+msg))
		}
	}
	switch spec.PodManagementPolicy {
	case "", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.NotSupported(path.Child("podManagementPolicy"), spec.PodManagementPolicy,
			[]string{string(appsv1.OrderedReadyPodManagement), string(appsv1.ParallelPodManagement)}))
	}
	errs = append(errs, validateStatefulSetUpdateStrategy(spec, path.Child("updateStrategy"))...)
	errs = append(errs, validateStatefulSetScaleStrategy(spec, path.Child("scaleStrategy"))...)
	errs = append(errs, validateTemplateBasics(statefulSetKind, &spec.Template, path.Child("template"))...)
	errs = append(errs, validateClaimTemplates(&spec.Template, spec.VolumeClaimTemplates, true, path)...)
	if old == nil || !apiequality.Semantic.DeepEqual(spec.VolumeClaimTemplates, old.Spec.VolumeClaimTemplates) {
		errs = append(errs, validateClaimSpecs(spec.VolumeClaimTemplates, path.Child("volumeClaimTemplates"))...)
	}
	errs = append(errs, validateRetentionPolicy(spec.PersistentVolumeClaimRetentionPolicy, path.Child("persistentVolumeClaimRetentionPolicy"))...)
	errs = append(errs, validateClaimUpdateStrategy(spec.VolumeClaimUpdateStrategy, path.Child("volumeClaimUpdateStrategy"))...)
	return errs
}

// ValidateStatefulSetUpdate validates obj as ValidateStatefulSet does and checks the changes from
// old, as OpenKruise v1.9.0 does (ValidateStatefulSetUpdate and the handler's InPlaceOnly check):
//   - spec.selector, spec.serviceName and spec.podManagementPolicy are immutable; every other
//     field may change (replicas, ordinals, template, updateStrategy with its minReadySeconds,
//     persistentVolumeClaimRetentionPolicy, revisionHistoryLimit, reserveOrdinals, lifecycle,
//     scaleStrategy, volumeClaimUpdateStrategy); with volumeClaimUpdateStrategy.type
//     OnPodRollingUpdate (where template changes reach existing claims) volumeClaimTemplates
//     change only in their storage size, otherwise freely (they apply to new claims only);
//   - with rollingUpdate.podUpdatePolicy InPlaceOnly, the template's spec may change in nothing
//     but the images of its containers (the CloneSet's InPlaceOnly rule).
//
// As for the CloneSet, an update that leaves the spec unchanged is accepted even when the stored
// spec would now be refused (OpenKruise refuses it).
func ValidateStatefulSetUpdate(obj, old *v1beta1.StatefulSet) field.ErrorList {
	path := field.NewPath("spec")
	var errs field.ErrorList
	if ru := obj.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.PodUpdatePolicy == v1beta1.InPlaceOnlyStatefulSetPodUpdatePolicy {
		if e := inPlaceOnlyChange(&old.Spec.Template, &obj.Spec.Template, "updateStrategy.rollingUpdate.podUpdatePolicy", path); e != nil {
			errs = append(errs, e)
		}
	}
	if apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) {
		return errs
	}
	errs = append(errs, validateStatefulSet(obj, old)...)
	errs = append(errs, apivalidation.ValidateImmutableField(obj.Spec.Selector, old.Spec.Selector, path.Child("selector"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(obj.Spec.ServiceName, old.Spec.ServiceName, path.Child("serviceName"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(podManagementPolicy(&obj.Spec), podManagementPolicy(&old.Spec),
		path.Child("podManagementPolicy"))...)
	if obj.Spec.VolumeClaimUpdateStrategy.Type == v1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy {
		// Only then do claim template changes reach existing claims (as in OpenKruise; otherwise
		// they apply to new claims only, and any change is allowed).
		errs = append(errs, validateClaimTemplateChanges(obj.Spec.VolumeClaimTemplates, old.Spec.VolumeClaimTemplates,
			path.Child("volumeClaimTemplates"))...)
	}
	return errs
}

// podManagementPolicy is spec's policy, defaulted.
func podManagementPolicy(spec *v1beta1.StatefulSetSpec) appsv1.PodManagementPolicyType {
	if spec.PodManagementPolicy == "" {
		return appsv1.OrderedReadyPodManagement
	}
	return spec.PodManagementPolicy
}

// validateStatefulSetCounts: replicas, revisionHistoryLimit and ordinals.start are ≥ 0.
func validateStatefulSetCounts(spec *v1beta1.StatefulSetSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Replicas != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*spec.Replicas), path.Child("replicas"))...)
		if e := ordinal.CheckReplicas(*spec.Replicas); e != nil {
			errs = append(errs, field.Invalid(path.Child("replicas"), *spec.Replicas, fmt.Sprintf("must be at most %d: %s", e.Bound, e.Why)))
		}
	}
	if spec.RevisionHistoryLimit != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*spec.RevisionHistoryLimit), path.Child("revisionHistoryLimit"))...)
	}
	if spec.Ordinals != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.Ordinals.Start), path.Child("ordinals", "start"))...)
	}
	return errs
}

// validateReserveOrdinals: each entry is an ordinal (an integer ≥ 0) or a range "first-last" of
// ordinals (digits only, first ≤ last), as OpenKruise reads them; ordinals above 2147483647 (no pod
// has one), ranges of more than ordinal.MaxReservedRange ordinals, more than
// ordinal.MaxReserveEntries entries (then the entries are not checked one by one) and more than
// ordinal.MaxReservedOrdinals ordinals in all are refused (pkg/core/ordinal's bounds, which the
// controller applies too).
func validateReserveOrdinals(list []intstr.IntOrString, p *field.Path) field.ErrorList {
	if e := ordinal.CheckReserveEntries(len(list)); e != nil {
		tooMany := field.TooMany(p, len(list), e.Bound)
		tooMany.Detail = fmt.Sprintf("must have at most %d entries: %s", e.Bound, e.Why)
		return field.ErrorList{tooMany}
	}
	var errs field.ErrorList
	for i, o := range list {
		switch o.Type {
		case intstr.Int:
			if o.IntVal < 0 {
				errs = append(errs, field.Invalid(p.Index(i), o.IntVal, "must not be negative: ordinals start at 0"))
			}
		case intstr.String:
			if _, _, err := ordinal.ParseRange(o.StrVal); err != nil {
				errs = append(errs, field.Invalid(p.Index(i), o.StrVal, err.Error()))
			}
		default:
			errs = append(errs, field.Invalid(p.Index(i), o.String(), "must be an ordinal or a range such as '3-5'"))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if r, err := ordinal.ParseReserved(list); err == nil {
		if e := ordinal.CheckReservedCount(r); e != nil {
			errs = append(errs, field.Invalid(p, fmt.Sprintf("%d reserved ordinals", e.Value),
				fmt.Sprintf("must reserve at most %d ordinals in all: %s", e.Bound, e.Why)))
		}
	}
	return errs
}

// validateStatefulSetUpdateStrategy checks spec.updateStrategy.
func validateStatefulSetUpdateStrategy(spec *v1beta1.StatefulSetSpec, p *field.Path) field.ErrorList {
	s := &spec.UpdateStrategy
	switch s.Type {
	case "", appsv1.RollingUpdateStatefulSetStrategyType: // "" is defaulted to RollingUpdate
	case appsv1.OnDeleteStatefulSetStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(p.Child("rollingUpdate"), "only allowed when updateStrategy.type is RollingUpdate")}
		}
		return nil
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), s.Type, []string{
			string(appsv1.RollingUpdateStatefulSetStrategyType), string(appsv1.OnDeleteStatefulSetStrategyType)})}
	}
	ru := s.RollingUpdate
	if ru == nil {
		return nil // every field defaulted
	}
	rp := p.Child("rollingUpdate")
	var errs field.ErrorList
	if ru.Partition != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*ru.Partition), rp.Child("partition"))...)
	}
	if m := ru.MinReadySeconds; m != nil && (*m < 0 || *m > maxMinReadySeconds) {
		errs = append(errs, field.Invalid(rp.Child("minReadySeconds"), *m, fmt.Sprintf("must be between 0 and %d (5 minutes)", maxMinReadySeconds)))
	}
	// B1: any valid maxUnavailable, whatever podManagementPolicy (see ValidateStatefulSet).
	if ru.MaxUnavailable != nil {
		errs = append(errs, validateStatefulSetMaxUnavailable(*ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
	}
	errs = append(errs, validatePodUpdatePolicy(ru.PodUpdatePolicy, &spec.Template, rp.Child("podUpdatePolicy"))...)
	if ips := ru.InPlaceUpdateStrategy; ips != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(ips.GracePeriodSeconds),
			rp.Child("inPlaceUpdateStrategy", "gracePeriodSeconds"))...)
	}
	if uu := ru.UnorderedUpdate; uu != nil {
		up := rp.Child("unorderedUpdate")
		if podManagementPolicy(spec) != appsv1.ParallelPodManagement {
			errs = append(errs, field.Forbidden(up, "only allowed when podManagementPolicy is Parallel"))
		}
		errs = append(errs, validatePriority(uu.PriorityStrategy, up.Child("priorityStrategy"))...)
	}
	return errs
}

// validatePodUpdatePolicy: ReCreate, InPlaceIfPossible or InPlaceOnly; the in-place policies need
// the InPlaceUpdateReady readiness gate in the template, through which the controller takes a pod
// out of its Service before changing it.
func validatePodUpdatePolicy(policy v1beta1.StatefulSetPodUpdatePolicyType, tmpl *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	switch policy {
	case "", v1beta1.RecreateStatefulSetPodUpdatePolicy: // "" is defaulted to ReCreate
		return nil
	case v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy, v1beta1.InPlaceOnlyStatefulSetPodUpdatePolicy:
	default:
		return field.ErrorList{field.NotSupported(p, policy, []string{string(v1beta1.RecreateStatefulSetPodUpdatePolicy),
			string(v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy), string(v1beta1.InPlaceOnlyStatefulSetPodUpdatePolicy)})}
	}
	for _, g := range tmpl.Spec.ReadinessGates {
		if g.ConditionType == appspub.InPlaceUpdateReady {
			return nil
		}
	}
	return field.ErrorList{field.Required(field.NewPath("spec", "template", "spec", "readinessGates"), fmt.Sprintf(
		"must include conditionType %s when updateStrategy.rollingUpdate.podUpdatePolicy is %s",
		appspub.InPlaceUpdateReady, policy))}
}

// validateStatefulSetScaleStrategy: scaleStrategy.maxUnavailable is a valid maxUnavailable and,
// unless podManagementPolicy is Parallel, the integer 1 (OpenKruise's rule: an OrderedReady
// StatefulSet scales one pod at a time).
func validateStatefulSetScaleStrategy(spec *v1beta1.StatefulSetSpec, p *field.Path) field.ErrorList {
	if spec.ScaleStrategy == nil || spec.ScaleStrategy.MaxUnavailable == nil {
		return nil
	}
	v := *spec.ScaleStrategy.MaxUnavailable
	mp := p.Child("maxUnavailable")
	errs := validateStatefulSetMaxUnavailable(v, mp)
	if len(errs) == 0 && podManagementPolicy(spec) != appsv1.ParallelPodManagement && v != intstr.FromInt32(1) {
		errs = append(errs, field.Forbidden(mp, "must be 1 unless podManagementPolicy is Parallel: OrderedReady scales one pod at a time"))
	}
	return errs
}

// validateStatefulSetMaxUnavailable: an integer ≥ 1 or a whole percentage "N%" with 0 < N ≤ 100
// (digits only, as Kubernetes reads it); 0 would let no pod be updated.
func validateStatefulSetMaxUnavailable(v intstr.IntOrString, p *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.Int:
		if v.IntVal < 1 {
			return field.ErrorList{field.Invalid(p, v.IntVal, "must be at least 1: with 0 no pod could ever be updated")}
		}
		return nil
	case intstr.String:
		digits, isPercent := strings.CutSuffix(v.StrVal, "%")
		if !isPercent || digits == "" || strings.Trim(digits, "0123456789") != "" {
			return field.ErrorList{field.Invalid(p, v.StrVal, "must be an integer or a whole percentage such as '10%'")}
		}
		n, err := strconv.Atoi(digits)
		switch {
		case err != nil || n > 100:
			return field.ErrorList{field.Invalid(p, v.StrVal, "must not be more than 100%")}
		case n == 0:
			return field.ErrorList{field.Invalid(p, v.StrVal, "must not be 0%: no pod could ever be updated")}
		}
		return nil
	default:
		return field.ErrorList{field.Invalid(p, v.String(), "must be an integer or a whole percentage such as '10%'")}
	}
}
