package validating

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules of the topology subsets that UnitedDeployment and WorkloadSpread share: node selector
// terms, preferred terms and tolerations are checked as Kubernetes checks them in a pod
// (ValidateNodeSelectorTerm, ValidatePreferredSchedulingTerms, ValidateTolerations of
// k8s.io/kubernetes, which OpenKruise calls and Kruise must not import), since the subset puts them
// into its pods; a patch must be a JSON object, the only form of a strategic merge patch.

// validateNodeSelectorTerm checks one node selector term: its expressions select node labels
// (a valid label key; In and NotIn with values, Exists and DoesNotExist without, Gt and Lt with a
// single value), its fields select metadata.name only (In or NotIn of one valid node name).
func validateNodeSelectorTerm(term *corev1.NodeSelectorTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range term.MatchExpressions {
		rp := p.Child("matchExpressions").Index(i)
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				errs = append(errs, field.Forbidden(rp.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(r.Values) != 1 {
				errs = append(errs, field.Required(rp.Child("values"), "must be a single value when `operator` is 'Lt' or 'Gt'"))
			}
		default:
			errs = append(errs, field.NotSupported(rp.Child("operator"), r.Operator, []string{
				string(corev1.NodeSelectorOpIn), string(corev1.NodeSelectorOpNotIn), string(corev1.NodeSelectorOpExists),
				string(corev1.NodeSelectorOpDoesNotExist), string(corev1.NodeSelectorOpGt), string(corev1.NodeSelectorOpLt)}))
		}
		errs = append(errs, metav1validation.ValidateLabelName(r.Key, rp.Child("key"))...)
	}
	for i, r := range term.MatchFields {
		rp := p.Child("matchFields").Index(i)
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(r.Values) != 1 {
				errs = append(errs, field.Required(rp.Child("values"), "must be a single value when `operator` is 'In' or 'NotIn' for a node field selector"))
			}
		default:
			errs = append(errs, field.Invalid(rp.Child("operator"), r.Operator, "not a valid selector operator for a node field selector"))
		}
		if r.Key != "metadata.name" {
			errs = append(errs, field.Invalid(rp.Child("key"), r.Key, "not a valid field selector key (only metadata.name is)"))
			continue
		}
		for j, v := range r.Values {
			for _, msg := range validation.IsDNS1123Subdomain(v) {
				errs = append(errs, field.Invalid(rp.Child("values").Index(j), v, msg))
			}
		}
	}
	return errs
}

// validatePreferredTerms checks preferred scheduling terms: a weight in [1, 100] and a valid term.
func validatePreferredTerms(terms []corev1.PreferredSchedulingTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range terms {
		if w := terms[i].Weight; w <= 0 || w > 100 {
			errs = append(errs, field.Invalid(p.Index(i).Child("weight"), w, "must be in the range 1-100"))
		}
		errs = append(errs, validateNodeSelectorTerm(&terms[i].Preference, p.Index(i).Child("preference"))...)
	}
	return errs
}

// validateTolerations checks tolerations as Kubernetes checks a pod's: a valid key, or none with
// operator Exists; operator Equal (or unset) with a valid label value, or Exists without a value;
// a known effect, NoExecute when tolerationSeconds is set.
func validateTolerations(tolerations []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		tp := p.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, tp.Child("key"))...)
		} else if t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(tp.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(tp.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				errs = append(errs, field.Invalid(tp.Child("value"), t.Value, strings.Join(msgs, "; ")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(tp.Child("value"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(tp.Child("operator"), t.Operator,
				[]string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, []string{string(corev1.TaintEffectNoSchedule),
				string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}))
		}
	}
	return errs
}

// validatePatchObject: a subset patch, when given, is a JSON object (a strategic merge patch of
// what the subset patches: what names, for the message).
func validatePatchObject(raw []byte, what string, p *field.Path) field.ErrorList {
	if raw == nil {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return field.ErrorList{field.Invalid(p, string(raw), fmt.Sprintf("must be a JSON object: a strategic merge patch of the %s", what))}
	}
	return nil
}

// reroot moves errors reported at root (e.g. "spec") under to, so that a workload validated on its
// own reports the fields of the template it was made from.
func reroot(errs field.ErrorList, root string, to *field.Path) field.ErrorList {
	for _, e := range errs {
		if e.Field == root || strings.HasPrefix(e.Field, root+".") || strings.HasPrefix(e.Field, root+"[") {
			e.Field = to.String() + strings.TrimPrefix(e.Field, root)
		}
	}
	return errs
}
