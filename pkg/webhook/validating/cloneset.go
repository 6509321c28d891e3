package validating

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// ValidateCloneSet reports every problem of a new CloneSet as it would be stored (after defaulting),
// each at the path of the offending field. It answers as OpenKruise v1.9.0's CloneSet webhook
// does (pkg/webhook/cloneset/validating/validation.go, validateCloneSetSpec and what it calls); the
// pod template itself is checked as a pod by the webhook's dry run (podtemplate.go), which stands
// for OpenKruise's call of Kubernetes' ValidatePodTemplateSpec.
//
// An absent field is validated as the value the defaulting webhook gives it (replicas 1, type
// ReCreate, partition 0, maxUnavailable 20%, maxSurge 0), as OpenKruise's defaulting webhook runs
// before its validating one.
//
// The rules:
//   - spec.selector is required, not empty and a valid label selector, and it selects the
//     template's labels (reported at spec.template.metadata.labels);
//   - spec.replicas ≥ 0;
//   - spec.progressDeadlineSeconds, when set, is ≥ 0 and, unless it is 2147483647, greater than
//     spec.minReadySeconds;
//   - spec.updateStrategy.type is ReCreate, InPlaceIfPossible or InPlaceOnly;
//   - spec.updateStrategy.partition, .maxUnavailable and .maxSurge are an integer or "N%", resolved
//     against replicas rounding up; partition must not resolve below 0; maxSurge must resolve to 0
//     with InPlaceOnly; with replicas > 0 maxUnavailable and maxSurge must not both resolve below 1.
//     There is no upper bound ("120%" and partition > replicas are accepted) and negative
//     maxUnavailable or maxSurge are accepted when the other one lets the update progress;
//   - spec.updateStrategy.priorityStrategy: weightPriority or orderPriority, not both; weights in
//     [0, 100] with a non-empty valid selector; non-empty ordered keys;
//   - spec.updateStrategy.scatterStrategy: every term has a key, no key:value is listed twice;
//   - spec.scaleStrategy.podsToDelete has no duplicates, and names only pods of this CloneSet: a new
//     CloneSet has none, so every entry of a new CloneSet is refused (see ValidatePodsToDelete for
//     an update);
//   - the template has containers with names and images, restartPolicy Always (or unset) and no
//     activeDeadlineSeconds;
//   - each spec.volumeClaimTemplates entry becomes a pod volume of its name: the name is a DNS
//     label that no template volume and no other claim template has, and every volumeMount and
//     volumeDevice of the template names a volume or a claim template.
//
// Not checked, as OpenKruise does not check them: revisionHistoryLimit, minReadySeconds,
// scaleStrategy.maxUnavailable and disablePVCReuse, updateStrategy.paused and
// inPlaceUpdateStrategy.gracePeriodSeconds, the lifecycle hooks, and the image pre-download
// annotations (Kruise's controller reads an out-of-range value of these as OpenKruise's does, or
// as harmlessly).
//
// One deliberate difference: a percentage must be a whole number ("50%", not "50.5%", "1e1%" or
// "1_0%"), which OpenKruise's webhook accepts: Kruise's controller, like Kubernetes, reads
// percentages as whole numbers and would silently replace such a value by the default (a partition
// of 0: every pod updated).
func ValidateCloneSet(obj *v1alpha1.CloneSet) field.ErrorList {
	return validateCloneSet(obj, nil)
}

// validateCloneSet checks obj; old is the stored CloneSet for an update, nil for a create.
func validateCloneSet(obj, old *v1alpha1.CloneSet) field.ErrorList {
	spec := &obj.Spec
	path := field.NewPath("spec")
	replicas := 1
	if spec.Replicas != nil {
		replicas = int(*spec.Replicas)
	}
	var errs field.ErrorList
	errs = append(errs, validateSelector("CloneSet", spec.Selector, spec.Template.Labels, path)...)
	if spec.Replicas != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*spec.Replicas), path.Child("replicas"))...)
	}
	errs = append(errs, validateProgressDeadline(spec, path.Child("progressDeadlineSeconds"))...)
	errs = append(errs, validateUpdateStrategy(&spec.UpdateStrategy, replicas, path.Child("updateStrategy"))...)
	var oldPodsToDelete []string
	if old != nil {
		oldPodsToDelete = old.Spec.ScaleStrategy.PodsToDelete
	}
	errs = append(errs, validatePodsToDelete(spec.ScaleStrategy.PodsToDelete, oldPodsToDelete, old == nil,
		path.Child("scaleStrategy", "podsToDelete"))...)
	errs = append(errs, validateTemplateBasics("CloneSet", &spec.Template, path.Child("template"))...)
	errs = append(errs, validateClaimTemplates(&spec.Template, spec.VolumeClaimTemplates, false, path)...)
	return errs
}

// ValidateCloneSetUpdate validates obj as ValidateCloneSet does and checks the changes from old, as
// OpenKruise v1.9.0 does (validation.go, validateCloneSetUpdate, and
// pkg/controller/cloneset/core/cloneset_core.go, ValidateCloneSetUpdate):
//   - spec.selector is immutable (every other spec field may change);
//   - spec.scaleStrategy.podsToDelete: only the names not listed before are checked (see also
//     ValidatePodsToDelete);
//   - with updateStrategy.type InPlaceOnly, the template's spec may change in nothing but the
//     images of its containers (same containers, same order); its labels and annotations may change.
//
// An update that leaves the spec unchanged (metadata only: labels, annotations, finalizers) is
// accepted even when the stored spec would now be refused, so an object stored before a rule
// existed can still be relabelled or finalized (OpenKruise refuses it).
//
// inPlace is not consulted: OpenKruise allows exactly image changes under InPlaceOnly, whatever
// the controller could do in place.
func ValidateCloneSetUpdate(obj, old *v1alpha1.CloneSet) field.ErrorList {
	path := field.NewPath("spec")
	var errs field.ErrorList
	if obj.Spec.UpdateStrategy.Type == v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType {
		if e := inPlaceOnlyChange(&old.Spec.Template, &obj.Spec.Template, "updateStrategy.type", path); e != nil {
			errs = append(errs, e)
		}
	}
	if apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) {
		return errs
	}
	errs = append(errs, validateCloneSet(obj, old)...)
	errs = append(errs, apivalidation.ValidateImmutableField(obj.Spec.Selector, old.Spec.Selector, path.Child("selector"))...)
	return errs
}

// ValidatePodsToDelete checks, for an update, that each name added to spec.scaleStrategy.podsToDelete
// is a pod of this CloneSet that is not terminating, reading pods with c; names listed before are
// not checked again. It is OpenKruise's check (validation.go, validateScaleStrategy) that needs the
// API: the webhook calls it after ValidateCloneSetUpdate. For a create, ValidateCloneSet already
// refuses every entry; for duplicates or invalid names it reports nothing (ValidateCloneSetUpdate does).
func ValidatePodsToDelete(ctx context.Context, c client.Reader, obj, old *v1alpha1.CloneSet) field.ErrorList {
	if old == nil {
		return nil
	}
	names := obj.Spec.ScaleStrategy.PodsToDelete
	if len(duplicates(names)) > 0 {
		return nil
	}
	before := map[string]bool{}
	for _, n := range old.Spec.ScaleStrategy.PodsToDelete {
		before[n] = true
	}
	p := field.NewPath("spec", "scaleStrategy", "podsToDelete")
	var errs field.ErrorList
	for i, name := range names {
		if before[name] || len(validation.IsDNS1123Subdomain(name)) > 0 {
			continue
		}
		pod := &corev1.Pod{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: name}, pod); err != nil {
			errs = append(errs, field.Invalid(p.Index(i), name, fmt.Sprintf("cannot read pod %s: %v", name, err)))
			continue
		}
		if pod.DeletionTimestamp != nil {
			errs = append(errs, field.Invalid(p.Index(i), name, fmt.Sprintf("pod %s is already terminating", name)))
		} else if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != obj.UID {
			errs = append(errs, field.Invalid(p.Index(i), name, fmt.Sprintf("pod %s is not controlled by this CloneSet", name)))
		}
	}
	return errs
}

// validateProgressDeadline: ≥ 0 and, unless it is math.MaxInt32, greater than minReadySeconds.
func validateProgressDeadline(spec *v1alpha1.CloneSetSpec, p *field.Path) field.ErrorList {
	d := spec.ProgressDeadlineSeconds
	if d == nil {
		return nil
	}
	errs := apivalidation.ValidateNonnegativeField(int64(*d), p)
	if *d != math.MaxInt32 && *d <= spec.MinReadySeconds {
		errs = append(errs, field.Invalid(p, *d, fmt.Sprintf("must be greater than minReadySeconds (%d)", spec.MinReadySeconds)))
	}
	return errs
}

// The defaults of the int-or-percent fields, as the defaulting webhook sets them.
var (
	defaultPartition      = intstr.FromInt32(0)
	defaultMaxUnavailable = intstr.FromString("20%")
	defaultMaxSurge       = intstr.FromInt32(0)
)

func validateUpdateStrategy(s *v1alpha1.CloneSetUpdateStrategy, replicas int, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.Type {
	case "", // defaulted to ReCreate
		v1alpha1.RecreateCloneSetUpdateStrategyType, v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType,
		v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType:
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), s.Type, []string{
			string(v1alpha1.RecreateCloneSetUpdateStrategyType),
			string(v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType),
			string(v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType)}))
	}

	if partition, err := resolveIntOrPercent(s.Partition, defaultPartition, replicas); err != nil {
		errs = append(errs, field.Invalid(p.Child("partition"), intOrPercentValue(s.Partition, defaultPartition), err.Error()))
	} else if partition < 0 {
		errs = append(errs, field.Invalid(p.Child("partition"), intOrPercentValue(s.Partition, defaultPartition),
			fmt.Sprintf("must not be negative (it is %d pods of %d replicas)", partition, replicas)))
	}

	maxUnavailable, unavailableErr := resolveIntOrPercent(s.MaxUnavailable, defaultMaxUnavailable, replicas)
	if unavailableErr != nil {
		errs = append(errs, field.Invalid(p.Child("maxUnavailable"), intOrPercentValue(s.MaxUnavailable, defaultMaxUnavailable), unavailableErr.Error()))
	}
	maxSurge, surgeErr := resolveIntOrPercent(s.MaxSurge, defaultMaxSurge, replicas)
	if surgeErr != nil {
		errs = append(errs, field.Invalid(p.Child("maxSurge"), intOrPercentValue(s.MaxSurge, defaultMaxSurge), surgeErr.Error()))
	} else if s.Type == v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType && maxSurge > 0 {
		errs = append(errs, field.Forbidden(p.Child("maxSurge"), fmt.Sprintf(
			"must be 0 when updateStrategy.type is InPlaceOnly (it is %d pods of %d replicas): surge pods are created, never updated in place",
			maxSurge, replicas)))
	}
	if unavailableErr == nil && surgeErr == nil && replicas > 0 && maxUnavailable < 1 && maxSurge < 1 {
		errs = append(errs, field.Invalid(p.Child("maxUnavailable"), intOrPercentValue(s.MaxUnavailable, defaultMaxUnavailable), fmt.Sprintf(
			"maxUnavailable and maxSurge must not both be less than 1 pod (they are %d and %d of %d replicas): no pod could ever be updated",
			maxUnavailable, maxSurge, replicas)))
	}

	errs = append(errs, validatePriority(s.PriorityStrategy, p.Child("priorityStrategy"))...)
	errs = append(errs, validateScatter(s.ScatterStrategy, p.Child("scatterStrategy"))...)
	return errs
}

// resolveIntOrPercent returns v (def when nil) as a number of pods out of total, as OpenKruise's
// webhook resolves it: an integer as it is, "N%" as ⌈N·total/100⌉. N must be a whole number (see
// ValidateCloneSet for this deliberate difference).
func resolveIntOrPercent(v *intstr.IntOrString, def intstr.IntOrString, total int) (int, error) {
	if v == nil {
		v = &def
	}
	switch v.Type {
	case intstr.Int:
		return int(v.IntVal), nil
	case intstr.String:
	default:
		return 0, errors.New("must be an integer or a percentage such as '10%'")
	}
	digits, isPercent := strings.CutSuffix(v.StrVal, "%")
	if !isPercent {
		return 0, errors.New("must be an integer or a percentage such as '10%' (a string without '%' is not read as a number)")
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		if _, ferr := strconv.ParseFloat(digits, 64); ferr == nil {
			return 0, errors.New("must be a whole-number percentage such as '10%': Kruise reads percentages as whole numbers")
		}
		return 0, errors.New("must be an integer or a percentage such as '10%'")
	}
	return int(math.Ceil(float64(n) * float64(total) / 100)), nil
}

// intOrPercentValue is v (def when nil) for an error message.
func intOrPercentValue(v *intstr.IntOrString, def intstr.IntOrString) string {
	if v == nil {
		return def.String()
	}
	return v.String()
}

// validatePriority: weightPriority or orderPriority, not both; weights in [0, 100] with a
// non-empty, valid selector; non-empty ordered keys.
func validatePriority(s *appspub.UpdatePriorityStrategy, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if len(s.WeightPriority) > 0 && len(s.OrderPriority) > 0 {
		errs = append(errs, field.Forbidden(p, "set weightPriority or orderPriority, not both"))
	}
	for i, t := range s.WeightPriority {
		tp := p.Child("weightPriority").Index(i)
		if t.Weight < 0 || t.Weight > 100 {
			errs = append(errs, field.Invalid(tp.Child("weight"), t.Weight, "must be between 0 and 100"))
		}
		sel := t.MatchSelector
		sp := tp.Child("matchSelector")
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			errs = append(errs, field.Required(sp, "an empty selector would match every pod"))
			continue
		}
		selErrs := metav1validation.ValidateLabelSelector(&sel, metav1validation.LabelSelectorValidationOptions{}, sp)
		if _, err := metav1.LabelSelectorAsSelector(&sel); err != nil && len(selErrs) == 0 {
			selErrs = field.ErrorList{field.Invalid(sp, sel, err.Error())}
		}
		errs = append(errs, selErrs...)
	}
	for i, t := range s.OrderPriority {
		if t.OrderedKey == "" {
			errs = append(errs, field.Required(p.Child("orderPriority").Index(i).Child("orderedKey"), ""))
		}
	}
	return errs
}

// validateScatter: every term has a key, and no "key:value" is listed twice (OpenKruise compares
// terms by that joined string, so {a:b, c} and {a, b:c} are the same term).
func validateScatter(s v1alpha1.UpdateScatterStrategy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, t := range s {
		if t.Key == "" {
			errs = append(errs, field.Required(p.Index(i).Child("key"), ""))
		}
		id := t.Key + ":" + t.Value
		if seen[id] {
			errs = append(errs, field.Duplicate(p.Index(i), id))
		}
		seen[id] = true
	}
	return errs
}

// validatePodsToDelete: no name twice; on a create no name at all (a new CloneSet controls no pod);
// on an update, every name not listed before is a valid pod name (whether that pod is one of the
// CloneSet's is ValidatePodsToDelete's check).
func validatePodsToDelete(names, before []string, create bool, p *field.Path) field.ErrorList {
	if dups := duplicates(names); len(dups) > 0 {
		var errs field.ErrorList
		for _, i := range dups {
			errs = append(errs, field.Duplicate(p.Index(i), names[i]))
		}
		return errs
	}
	listed := map[string]bool{}
	for _, n := range before {
		listed[n] = true
	}
	var errs field.ErrorList
	for i, name := range names {
		switch {
		case listed[name]:
		case create:
			errs = append(errs, field.Invalid(p.Index(i), name,
				"a new CloneSet controls no pods yet: podsToDelete may only name pods of this CloneSet"))
		default:
			for _, msg := range validation.IsDNS1123Subdomain(name) {
				errs = append(errs, field.Invalid(p.Index(i), name, "not a pod name: "+msg))
			}
		}
	}
	return errs
}

// duplicates returns the indexes of the names listed before.
func duplicates(names []string) []int {
	seen := map[string]bool{}
	var dups []int
	for i, n := range names {
		if seen[n] {
			dups = append(dups, i)
		}
		seen[n] = true
	}
	return dups
}
