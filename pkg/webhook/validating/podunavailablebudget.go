package validating

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// PodUnavailableBudgetPath is where the PodUnavailableBudget validating webhook is served.
const PodUnavailableBudgetPath = "/validate-policy-kruise-io-v1alpha1-podunavailablebudget"

// podUnavailableBudgetKind names the PodUnavailableBudget in errors.
const podUnavailableBudgetKind = "PodUnavailableBudget"

// pubOperations are the operations the PubProtectOperationAnnotation may list.
var pubOperations = []policyv1alpha1.PubOperation{policyv1alpha1.PubDeleteOperation, policyv1alpha1.PubUpdateOperation,
	policyv1alpha1.PubEvictOperation, policyv1alpha1.PubResizeOperation}

// +kubebuilder:rbac:groups=policy.kruise.io,resources=podunavailablebudgets,verbs=list;watch

// registerPodUnavailableBudgets adds the PodUnavailableBudget validating webhook; budgets lists the
// budgets of a namespace for the conflict check (nil: not checked).
func registerPodUnavailableBudgets(srv webhook.Server, scheme *runtime.Scheme, budgets client.Reader, gate Gate[*policyv1alpha1.PodUnavailableBudget]) {
	mount.Admission(srv, PodUnavailableBudgetPath, admission.WithValidator[*policyv1alpha1.PodUnavailableBudget](scheme,
		podUnavailableBudgetValidator{budgets: budgets, gate: gate}))
}

// ValidatePodUnavailableBudget reports every problem of a new PodUnavailableBudget, each at the
// path of the offending field, as OpenKruise v1.9.0's webhook decides them
// (pkg/webhook/podunavailablebudget/validating), for the rules that need nothing but the object;
// the conflict with other budgets is the webhook's (podUnavailableBudgetConflicts).
//
// OpenKruise's rules:
//   - exactly one of spec.selector and spec.targetRef;
//   - spec.selector is a valid label selector that is not empty;
//   - spec.targetRef has an apiVersion (a valid group/version), a kind and a name;
//   - exactly one of spec.maxUnavailable and spec.minAvailable, an integer ≥ 0 or a percentage
//     "N%" of at most 100%;
//   - the annotation kruise.io/pub-protect-operations, when present, is a comma-separated list of
//     DELETE, UPDATE and EVICT (no spaces; an empty value is refused);
//   - the annotation pub.kruise.io/protect-total-replicas, when present, is a 32-bit integer;
//   - on update (ValidatePodUnavailableBudgetUpdate), spec.selector and spec.targetRef do not
//     change.
//
// Kruise's differences:
//   - RESIZE is an operation the annotation may list too (Kruise's budgets guard resizes:
//     podbudget.Guards);
//   - protect-total-replicas is not negative, when new or changed (a stored negative value stays
//     accepted on other updates);
//   - an update that changes neither the spec nor the annotations is accepted as it is (OpenKruise
//     validates the whole object, conflicts included, on every update: a budget created in conflict
//     while the webhook was down could then not even lose a finalizer).
func ValidatePodUnavailableBudget(obj *policyv1alpha1.PodUnavailableBudget) field.ErrorList {
	return validatePodUnavailableBudget(obj, nil)
}

// ValidatePodUnavailableBudgetUpdate validates obj, replacing old, as ValidatePodUnavailableBudget
// does, and refuses a change of spec.selector or spec.targetRef. An update that changes neither the
// spec nor the annotations is accepted as it is.
func ValidatePodUnavailableBudgetUpdate(obj, old *policyv1alpha1.PodUnavailableBudget) field.ErrorList {
	if !podUnavailableBudgetChanged(obj, old) {
		return nil
	}
	errs := validatePodUnavailableBudget(obj, old)
	spec := field.NewPath("spec")
	if !apiequality.Semantic.DeepEqual(obj.Spec.Selector, old.Spec.Selector) {
		errs = append(errs, field.Forbidden(spec.Child("selector"), "cannot be changed: create another PodUnavailableBudget"))
	}
	if !apiequality.Semantic.DeepEqual(obj.Spec.TargetReference, old.Spec.TargetReference) {
		errs = append(errs, field.Forbidden(spec.Child("targetRef"), "cannot be changed: create another PodUnavailableBudget"))
	}
	return errs
}

// podUnavailableBudgetChanged reports whether an update from old to obj changes what the
// validation looks at.
func podUnavailableBudgetChanged(obj, old *policyv1alpha1.PodUnavailableBudget) bool {
	return !apiequality.Semantic.DeepEqual(obj.Spec, old.Spec) || !apiequality.Semantic.DeepEqual(obj.Annotations, old.Annotations)
}

// validatePodUnavailableBudget checks obj; old is the stored budget for an update, nil for a create.
func validatePodUnavailableBudget(obj, old *policyv1alpha1.PodUnavailableBudget) field.ErrorList {
	errs := validatePubAnnotations(obj, old)
	errs = append(errs, validatePubScope(&obj.Spec, field.NewPath("spec"))...)
	return append(errs, validatePubBudget(&obj.Spec, field.NewPath("spec"))...)
}

// validatePubAnnotations checks the protect-operations and protect-total-replicas annotations.
func validatePubAnnotations(obj, old *policyv1alpha1.PodUnavailableBudget) field.ErrorList {
	var errs field.ErrorList
	annotations := field.NewPath("metadata", "annotations")
	if v, ok := obj.Annotations[policyv1alpha1.PubProtectOperationAnnotation]; ok {
		var bad []string
		for _, op := range strings.Split(v, ",") {
			if !slices.Contains(pubOperations, policyv1alpha1.PubOperation(op)) {
				bad = append(bad, strconv.Quote(op))
			}
		}
		if len(bad) > 0 {
			errs = append(errs, field.Invalid(annotations.Key(policyv1alpha1.PubProtectOperationAnnotation), v, fmt.Sprintf(
				"must be a comma-separated list of %s, %s, %s and %s; not %s",
				pubOperations[0], pubOperations[1], pubOperations[2], pubOperations[3], strings.Join(bad, ", "))))
		}
	}
	key := policyv1alpha1.PubProtectTotalReplicasAnnotation
	if v, ok := obj.Annotations[key]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(annotations.Key(key), v, "must be an integer: the number of pods the budget counts on"))
		case n < 0 && (old == nil || old.Annotations[key] != v):
			errs = append(errs, field.Invalid(annotations.Key(key), v, "must not be negative: the number of pods the budget counts on"))
		}
	}
	return errs
}

// validatePubScope checks what selects the guarded pods: spec.selector or spec.targetRef.
func validatePubScope(spec *policyv1alpha1.PodUnavailableBudgetSpec, p *field.Path) field.ErrorList {
	switch {
	case spec.Selector == nil && spec.TargetReference == nil:
		return field.ErrorList{field.Required(p.Child("selector"), "set selector or targetRef: the pods the budget guards")}
	case spec.Selector != nil && spec.TargetReference != nil:
		return field.ErrorList{field.Forbidden(p.Child("targetRef"),
			"must not be set together with spec.selector: a budget guards the pods of one or the other")}
	case spec.Selector != nil:
		return validateNonEmptySelector(spec.Selector, "pod of the namespace", p.Child("selector"))
	}
	ref, rp := spec.TargetReference, p.Child("targetRef")
	var errs field.ErrorList
	if ref.APIVersion == "" {
		errs = append(errs, field.Required(rp.Child("apiVersion"), ""))
	} else if _, err := schema.ParseGroupVersion(ref.APIVersion); err != nil {
		errs = append(errs, field.Invalid(rp.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	if ref.Kind == "" {
		errs = append(errs, field.Required(rp.Child("kind"), ""))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(rp.Child("name"), ""))
	}
	return errs
}

// validatePubBudget checks how many pods may be unavailable: spec.maxUnavailable or
// spec.minAvailable.
func validatePubBudget(spec *policyv1alpha1.PodUnavailableBudgetSpec, p *field.Path) field.ErrorList {
	switch {
	case spec.MaxUnavailable == nil && spec.MinAvailable == nil:
		return field.ErrorList{field.Required(p.Child("maxUnavailable"), "set maxUnavailable or minAvailable")}
	case spec.MaxUnavailable != nil && spec.MinAvailable != nil:
		return field.ErrorList{field.Forbidden(p.Child("minAvailable"), "must not be set together with spec.maxUnavailable")}
	case spec.MaxUnavailable != nil:
		return validatePercentAtMost100(*spec.MaxUnavailable, p.Child("maxUnavailable"))
	}
	return validatePercentAtMost100(*spec.MinAvailable, p.Child("minAvailable"))
}

// validatePercentAtMost100: an integer ≥ 0 or a percentage "N%" of at most 100% (Kubernetes'
// ValidatePositiveIntOrPercent and IsNotMoreThan100Percent, which OpenKruise applies).
func validatePercentAtMost100(v intstr.IntOrString, p *field.Path) field.ErrorList {
	if errs := validateIntOrPercent(v, p); len(errs) > 0 || v.Type != intstr.String {
		return errs
	}
	if n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%")); err != nil || n > 100 {
		return field.ErrorList{field.Invalid(p, v.StrVal, "must not be greater than 100%")}
	}
	return nil
}

// podUnavailableBudgetValidator adapts ValidatePodUnavailableBudget and
// ValidatePodUnavailableBudgetUpdate to controller-runtime, and refuses a budget that guards pods
// another budget of its namespace guards (podUnavailableBudgetConflicts), as OpenKruise does: a
// pod is guarded by one budget only.
type podUnavailableBudgetValidator struct {
	// budgets lists the budgets of a namespace (nil: conflicts are not checked).
	budgets client.Reader
	// gate registers the budget's entries before it is stored.
	gate Gate[*policyv1alpha1.PodUnavailableBudget]
}

// ValidateCreate rejects an invalid new budget or one in conflict with another.
func (v podUnavailableBudgetValidator) ValidateCreate(ctx context.Context, obj *policyv1alpha1.PodUnavailableBudget) (admission.Warnings, error) {
	errs := ValidatePodUnavailableBudget(obj)
	if len(errs) == 0 && v.budgets != nil {
		errs = podUnavailableBudgetConflicts(ctx, v.budgets, obj)
	}
	if len(errs) > 0 {
		return nil, invalidBudget(obj.Name, errs)
	}
	return nil, admitStored(ctx, v.gate, obj)
}

// ValidateUpdate rejects an invalid budget, a forbidden change or, when the spec or the annotations
// change, a conflict with another budget.
func (v podUnavailableBudgetValidator) ValidateUpdate(ctx context.Context, oldObj, newObj *policyv1alpha1.PodUnavailableBudget) (admission.Warnings, error) {
	errs := ValidatePodUnavailableBudgetUpdate(newObj, oldObj)
	if len(errs) == 0 && v.budgets != nil && podUnavailableBudgetChanged(newObj, oldObj) {
		errs = podUnavailableBudgetConflicts(ctx, v.budgets, newObj)
	}
	if len(errs) > 0 {
		return nil, invalidBudget(newObj.Name, errs)
	}
	return nil, admitUpdate(ctx, v.gate, oldObj, newObj)
}

// ValidateDelete allows every deletion (the webhook is not registered for DELETE).
func (podUnavailableBudgetValidator) ValidateDelete(context.Context, *policyv1alpha1.PodUnavailableBudget) (admission.Warnings, error) {
	return nil, nil
}

// podUnavailableBudgetConflicts refuses pub when another budget of its namespace guards the same
// pods (pubConflict), naming the first in name order.
func podUnavailableBudgetConflicts(ctx context.Context, r client.Reader, pub *policyv1alpha1.PodUnavailableBudget) field.ErrorList {
	list := &policyv1alpha1.PodUnavailableBudgetList{}
	if err := r.List(ctx, list, client.InNamespace(pub.Namespace)); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), fmt.Errorf("cannot list the PodUnavailableBudgets: %w", err))}
	}
	sort.SliceStable(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	for i := range list.Items {
		other := &list.Items[i]
		if other.Name == pub.Name || other.Namespace != pub.Namespace {
			continue
		}
		if p := pubConflict(pub, other); p != nil {
			return field.ErrorList{field.Forbidden(p, fmt.Sprintf(
				"PodUnavailableBudget %s guards the same pods: a pod may be guarded by one budget only", other.Name))}
		}
	}
	return nil
}

// pubConflict returns the field of pub that makes it guard pods other guards, or nil, as
// OpenKruise decides it: with two targetRefs, when they name the same group (of the apiVersion),
// kind and name; with two selectors, when they loosely overlap (selectorsLooselyOverlap). A
// selector and a targetRef are never compared.
func pubConflict(pub, other *policyv1alpha1.PodUnavailableBudget) *field.Path {
	a, b := pub.Spec.TargetReference, other.Spec.TargetReference
	switch {
	case a != nil && b != nil:
		ga, _ := schema.ParseGroupVersion(a.APIVersion)
		gb, _ := schema.ParseGroupVersion(b.APIVersion)
		if ga.Group == gb.Group && a.Kind == b.Kind && a.Name == b.Name {
			return field.NewPath("spec", "targetRef")
		}
	case pub.Spec.Selector != nil && other.Spec.Selector != nil:
		if selectorsLooselyOverlap(pub.Spec.Selector, other.Spec.Selector) {
			return field.NewPath("spec", "selector")
		}
	}
	return nil
}

// selectorsLooselyOverlap is OpenKruise's loose test of whether two label selectors select the same
// pods: they constrain the same label keys, and on each key their requirements may both hold (a
// matchLabels entry is an In of its value and replaces an expression on its key; of several
// expressions on one key, the last counts). Selectors that constrain different keys never overlap
// here, even when a pod could match both.
func selectorsLooselyOverlap(a, b *metav1.LabelSelector) bool {
	ra, rb := requirementsByKey(a), requirementsByKey(b)
	if len(ra) != len(rb) {
		return false
	}
	for key, x := range ra {
		y, ok := rb[key]
		if !ok || !requirementAdmits(x, y) || !requirementAdmits(y, x) {
			return false
		}
	}
	return true
}

// requirementsByKey is sel as one requirement per key (see selectorsLooselyOverlap).
func requirementsByKey(sel *metav1.LabelSelector) map[string]metav1.LabelSelectorRequirement {
	out := map[string]metav1.LabelSelectorRequirement{}
	for _, r := range sel.MatchExpressions {
		out[r.Key] = r
	}
	for k, v := range sel.MatchLabels {
		out[k] = metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}}
	}
	return out
}

// requirementAdmits reports whether, seen from x, a label value may satisfy both x and y:
// In meets Exists, an In sharing a value, or a NotIn that leaves one of its values; Exists meets
// In, NotIn and Exists; NotIn meets Exists, DoesNotExist, NotIn, or an In with a value it leaves;
// DoesNotExist meets DoesNotExist and NotIn.
func requirementAdmits(x, y metav1.LabelSelectorRequirement) bool {
	leavesOne := func(notIn, in []string) bool { // some value of in is not in notIn
		for _, v := range in {
			if !slices.Contains(notIn, v) {
				return true
			}
		}
		return false
	}
	switch x.Operator {
	case metav1.LabelSelectorOpIn:
		switch y.Operator {
		case metav1.LabelSelectorOpExists:
			return true
		case metav1.LabelSelectorOpIn:
			for _, v := range x.Values {
				if slices.Contains(y.Values, v) {
					return true
				}
			}
		case metav1.LabelSelectorOpNotIn:
			return leavesOne(y.Values, x.Values)
		}
	case metav1.LabelSelectorOpExists:
		return y.Operator == metav1.LabelSelectorOpIn || y.Operator == metav1.LabelSelectorOpNotIn || y.Operator == metav1.LabelSelectorOpExists
	case metav1.LabelSelectorOpNotIn:
		switch y.Operator {
		case metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist, metav1.LabelSelectorOpNotIn:
			return true
		case metav1.LabelSelectorOpIn:
			return leavesOne(x.Values, y.Values)
		}
	case metav1.LabelSelectorOpDoesNotExist:
		return y.Operator == metav1.LabelSelectorOpDoesNotExist || y.Operator == metav1.LabelSelectorOpNotIn
	}
	return false
}

// invalidBudget turns errs about the PodUnavailableBudget name into the API's Invalid status (HTTP
// 422, one cause per field; OpenKruise answers 400 with the same messages joined), or nil.
func invalidBudget(name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(policyv1alpha1.GroupVersion.WithKind(podUnavailableBudgetKind).GroupKind(), name, errs)
}
