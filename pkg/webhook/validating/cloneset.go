package validating

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/inplace"
)

// ValidateCloneSet reports every problem of a CloneSet as it would be stored (after defaulting).
//
// Rules, each reported at the path of the offending field:
//   - spec.selector is required, non-empty and a valid label selector, and it must select the
//     template's labels (reported at spec.template.metadata.labels);
//   - spec.replicas, spec.revisionHistoryLimit and spec.minReadySeconds are ≥ 0;
//   - spec.progressDeadlineSeconds, when set, is greater than spec.minReadySeconds;
//   - spec.updateStrategy.partition, .maxUnavailable, .maxSurge and spec.scaleStrategy.maxUnavailable
//     are an integer ≥ 0 or a percentage "N%" with 0 ≤ N ≤ 100;
//   - spec.updateStrategy.type is empty (defaulted to ReCreate), ReCreate, InPlaceIfPossible or
//     InPlaceOnly, and maxSurge must be 0 with InPlaceOnly (no surge pod can be updated in place);
//   - the template has at least one container, unique container names that are DNS labels, and a
//     non-empty image for each container;
//   - spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds is ≥ 0;
//   - spec.updateStrategy.priorityStrategy sets weightPriority or orderPriority, not both, with
//     weights in [0, 100], non-empty valid selectors and non-empty ordered keys;
//     spec.updateStrategy.scatterStrategy terms have a key and are not repeated;
//   - spec.scaleStrategy.podsToDelete entries are valid pod names;
//   - lifecycle hooks use valid label keys and values and valid (qualified) finalizer names.
//
// maxUnavailable and maxSurge may both be 0: OpenKruise documents no such restriction for CloneSet.
// The pod template is not validated as a whole (that would take Kubernetes' full pod-spec validation):
// only the basics above, so a template the API server would reject as a pod is accepted here and its
// pods fail to be created, reported by the controller.
func ValidateCloneSet(obj *v1alpha1.CloneSet) field.ErrorList {
	spec := &obj.Spec
	path := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateSelector(spec.Selector, spec.Template.Labels, path)...)
	errs = append(errs, nonNegative(spec.Replicas, path.Child("replicas"))...)
	errs = append(errs, nonNegative(spec.RevisionHistoryLimit, path.Child("revisionHistoryLimit"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), path.Child("minReadySeconds"))...)
	if d := spec.ProgressDeadlineSeconds; d != nil && *d <= spec.MinReadySeconds {
		errs = append(errs, field.Invalid(path.Child("progressDeadlineSeconds"), *d,
			fmt.Sprintf("must be greater than minReadySeconds (%d)", spec.MinReadySeconds)))
	}
	errs = append(errs, validateUpdateStrategy(&spec.UpdateStrategy, path.Child("updateStrategy"))...)
	errs = append(errs, validateScaleStrategy(&spec.ScaleStrategy, path.Child("scaleStrategy"))...)
	errs = append(errs, validateTemplateBasics(&spec.Template, path.Child("template"))...)
	errs = append(errs, validateLifecycle(spec.Lifecycle, path.Child("lifecycle"))...)
	errs = append(errs, validatePreDownloadAnnotations(obj.Annotations)...)
	return errs
}

// validatePreDownloadAnnotations checks the image pre-download annotations: whole numbers, at least
// 1 for parallelism and timeout, at least 0 for min-updated-ready-pods.
func validatePreDownloadAnnotations(annotations map[string]string) field.ErrorList {
	var errs field.ErrorList
	if v, ok := annotations[v1alpha1.ImagePreDownloadMinUpdatedReadyPods]; ok {
		// A number or a percentage of the replicas, as OpenKruise reads it.
		minReady := intstr.Parse(v)
		if n, err := intstr.GetScaledValueFromIntOrPercent(&minReady, 100, true); err != nil || n < 0 || (n > 100 && minReady.Type == intstr.String) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(v1alpha1.ImagePreDownloadMinUpdatedReadyPods), v,
				"must be a whole number of at least 0 or a percentage from 0% to 100%"))
		}
	}
	for key, least := range map[string]int{v1alpha1.ImagePreDownloadParallelismKey: 1, v1alpha1.ImagePreDownloadTimeoutSecondsKey: 1} {
		v, ok := annotations[key]
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(v); err != nil || n < least {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(key), v,
				fmt.Sprintf("must be a whole number of at least %d", least)))
		}
	}
	return errs
}

// ValidateCloneSetUpdate validates obj as ValidateCloneSet does and checks the changes from old:
//   - spec.selector is immutable;
//   - with updateStrategy.type InPlaceOnly, a template change must be possible in place (as
//     pkg/inplace.Plan decides for the controller, with the controller's options inPlace);
//     otherwise it is forbidden at spec.template with Plan's reasons.
//
// An update that leaves the spec unchanged (metadata only: labels, annotations, finalizers) is always
// accepted, so an object stored before this validation existed can still be relabelled or deleted.
// spec.volumeClaimTemplates may change: OpenKruise documents such changes (they take effect on
// recreated pods).
func ValidateCloneSetUpdate(obj, old *v1alpha1.CloneSet, inPlace inplace.Options) field.ErrorList {
	if apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) {
		return nil
	}
	path := field.NewPath("spec")
	errs := ValidateCloneSet(obj)
	errs = append(errs, apivalidation.ValidateImmutableField(obj.Spec.Selector, old.Spec.Selector, path.Child("selector"))...)
	if obj.Spec.UpdateStrategy.Type == v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType &&
		!apiequality.Semantic.DeepEqual(obj.Spec.Template, old.Spec.Template) {
		// The same options as the controller's: an in-place change it would refuse is refused here.
		d := inplace.Plan(&old.Spec.Template, &obj.Spec.Template, "", inPlace)
		if !d.InPlace() {
			errs = append(errs, field.Forbidden(path.Child("template"), fmt.Sprintf(
				"updateStrategy.type is InPlaceOnly, and this change cannot be made in place: %s",
				strings.Join(d.RecreateReasons, "; "))))
		}
	}
	return errs
}

func validateSelector(sel *metav1.LabelSelector, templateLabels map[string]string, path *field.Path) field.ErrorList {
	p := path.Child("selector")
	if sel == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		return field.ErrorList{field.Invalid(p, sel, "empty selector is invalid for a CloneSet: it would select every pod")}
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, p)
	if len(errs) > 0 {
		return errs
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return field.ErrorList{field.Invalid(p, sel, err.Error())}
	}
	if !s.Matches(labels.Set(templateLabels)) {
		return field.ErrorList{field.Invalid(path.Child("template", "metadata", "labels"), templateLabels,
			"`selector` does not match template `labels`")}
	}
	return nil
}

func nonNegative(v *int32, p *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	return apivalidation.ValidateNonnegativeField(int64(*v), p)
}

func validateUpdateStrategy(s *v1alpha1.CloneSetUpdateStrategy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.Type {
	case "", v1alpha1.RecreateCloneSetUpdateStrategyType, v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType,
		v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType:
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), s.Type, []string{
			string(v1alpha1.RecreateCloneSetUpdateStrategyType),
			string(v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType),
			string(v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType)}))
	}
	errs = append(errs, intOrPercent(s.Partition, p.Child("partition"))...)
	errs = append(errs, intOrPercent(s.MaxUnavailable, p.Child("maxUnavailable"))...)
	surgeErrs := intOrPercent(s.MaxSurge, p.Child("maxSurge"))
	errs = append(errs, surgeErrs...)
	if len(surgeErrs) == 0 && s.Type == v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType && positive(s.MaxSurge) {
		errs = append(errs, field.Forbidden(p.Child("maxSurge"),
			"must be 0 when updateStrategy.type is InPlaceOnly: surge pods are created, never updated in place"))
	}
	errs = append(errs, validatePriority(s.PriorityStrategy, p.Child("priorityStrategy"))...)
	errs = append(errs, validateScatter(s.ScatterStrategy, p.Child("scatterStrategy"))...)
	if ips := s.InPlaceUpdateStrategy; ips != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(ips.GracePeriodSeconds),
			p.Child("inPlaceUpdateStrategy", "gracePeriodSeconds"))...)
	}
	return errs
}

// validatePriority: weightPriority or orderPriority, not both; weights in [0, 100] (OpenKruise
// accepts 0) with a non-empty, valid selector; non-empty ordered keys.
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
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			errs = append(errs, field.Required(tp.Child("matchSelector"), "an empty selector would match every pod"))
			continue
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(&sel, metav1validation.LabelSelectorValidationOptions{},
			tp.Child("matchSelector"))...)
	}
	for i, t := range s.OrderPriority {
		if t.OrderedKey == "" {
			errs = append(errs, field.Required(p.Child("orderPriority").Index(i).Child("orderedKey"), ""))
		}
	}
	return errs
}

// validateScatter: every term has a key, and no key/value pair is listed twice.
func validateScatter(s v1alpha1.UpdateScatterStrategy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[v1alpha1.UpdateScatterTerm]bool{}
	for i, t := range s {
		if t.Key == "" {
			errs = append(errs, field.Required(p.Index(i).Child("key"), ""))
		}
		if seen[t] {
			errs = append(errs, field.Duplicate(p.Index(i), fmt.Sprintf("%s=%s", t.Key, t.Value)))
		}
		seen[t] = true
	}
	return errs
}

func validateScaleStrategy(s *v1alpha1.CloneSetScaleStrategy, p *field.Path) field.ErrorList {
	errs := intOrPercent(s.MaxUnavailable, p.Child("maxUnavailable"))
	for i, name := range s.PodsToDelete {
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			errs = append(errs, field.Invalid(p.Child("podsToDelete").Index(i), name, "not a pod name: "+msg))
		}
	}
	return errs
}

// intOrPercent checks an absolute number or percentage of replicas: an integer ≥ 0, or "N%" with N
// an integer from 0 to 100. Nil is valid (defaulted).
func intOrPercent(v *intstr.IntOrString, p *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		return apivalidation.ValidateNonnegativeField(int64(v.IntValue()), p)
	}
	n, ok := percent(v.StrVal)
	switch {
	case !ok:
		return field.ErrorList{field.Invalid(p, v.StrVal, "must be an integer or a percentage such as '10%'")}
	case n > 100:
		return field.ErrorList{field.Invalid(p, v.StrVal, "must not be greater than 100%")}
	}
	return nil
}

// percent parses "N%" with N a non-negative decimal integer.
func percent(s string) (int, bool) {
	digits, found := strings.CutSuffix(s, "%")
	if !found || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// positive reports whether a valid int-or-percent is above zero.
func positive(v *intstr.IntOrString) bool {
	if v == nil {
		return false
	}
	if v.Type == intstr.Int {
		return v.IntValue() > 0
	}
	n, _ := percent(v.StrVal)
	return n > 0
}

func validateTemplateBasics(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, p.Child("metadata", "labels"))
	cp := p.Child("spec", "containers")
	if len(t.Spec.Containers) == 0 {
		return append(errs, field.Required(cp, "a pod needs at least one container"))
	}
	seen := map[string]bool{}
	for i, c := range t.Spec.Containers {
		ip := cp.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(ip.Child("name"), ""))
		case seen[c.Name]:
			errs = append(errs, field.Duplicate(ip.Child("name"), c.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), c.Name, msg))
			}
		}
		seen[c.Name] = true
		if strings.TrimSpace(c.Image) == "" {
			errs = append(errs, field.Required(ip.Child("image"), ""))
		}
	}
	// A CloneSet's pods run until the CloneSet says otherwise (the API server defaults "" to Always).
	if rp := t.Spec.RestartPolicy; rp != "" && rp != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("spec", "restartPolicy"), rp, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(p.Child("spec", "activeDeadlineSeconds"),
			"a CloneSet's pods must not end on a deadline: the CloneSet would replace them forever"))
	}
	return errs
}

func validateLifecycle(l *appspub.Lifecycle, p *field.Path) field.ErrorList {
	if l == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateHook(l.PreDelete, p.Child("preDelete"))...)
	errs = append(errs, validateHook(l.InPlaceUpdate, p.Child("inPlaceUpdate"))...)
	errs = append(errs, validateHook(l.PreNormal, p.Child("preNormal"))...)
	return errs
}

// validateHook checks that the hook's labels and finalizers could be put on a pod.
func validateHook(h *appspub.LifecycleHook, p *field.Path) field.ErrorList {
	if h == nil {
		return nil
	}
	var errs field.ErrorList
	keys := make([]string, 0, len(h.LabelsHandler))
	for k := range h.LabelsHandler {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kp := p.Child("labelsHandler").Key(k)
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(kp, k, "invalid label key: "+msg))
		}
		for _, msg := range validation.IsValidLabelValue(h.LabelsHandler[k]) {
			errs = append(errs, field.Invalid(kp, h.LabelsHandler[k], "invalid label value: "+msg))
		}
	}
	for i, f := range h.FinalizersHandler {
		for _, msg := range validation.IsQualifiedName(f) {
			errs = append(errs, field.Invalid(p.Child("finalizersHandler").Index(i), f, "invalid finalizer name: "+msg))
		}
	}
	return errs
}
