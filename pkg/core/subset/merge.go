package subset

import (
	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// ApplyToTemplate returns a copy of tpl placed in a UnitedDeployment subset: the subset's
// nodeSelectorTerm.matchExpressions ANDed into every required node selector term (a single term
// is created when there is none; nothing is added when the subset has no expressions), the
// subset's tolerations appended, then subset.patch applied as a strategic merge patch of the pod
// template. tpl and s are not modified.
func ApplyToTemplate(tpl *corev1.PodTemplateSpec, s *appsv1alpha1.UnitedDeploymentSubset) (*corev1.PodTemplateSpec, error) {
	out := tpl.DeepCopy()
	if exprs := s.NodeSelectorTerm.MatchExpressions; len(exprs) > 0 {
		required := requiredSelector(&out.Spec)
		if len(required.NodeSelectorTerms) == 0 {
			required.NodeSelectorTerms = []corev1.NodeSelectorTerm{{}}
		}
		for i := range required.NodeSelectorTerms {
			term := &required.NodeSelectorTerms[i]
			term.MatchExpressions = append(term.MatchExpressions, deepCopyRequirements(exprs)...)
		}
	}
	if s.Tolerations != nil {
		out.Spec.Tolerations = append(out.Spec.Tolerations, deepCopyTolerations(s.Tolerations)...)
	}
	if s.Patch.Raw == nil {
		return out, nil
	}
	return strategicMerge(out, s.Patch.Raw)
}

// ApplyToPod returns a copy of pod admitted into a WorkloadSpread subset: tolerations and
// preferred terms appended, requiredNodeSelectorTerm ANDed (expressions and fields) into every
// required term or set as the only term, then subset.patch applied as a strategic merge patch of
// the pod. As OpenKruise, the pod always gets a (possibly empty) node affinity, and a patch that
// changes priorityClassName clears spec.priority. pod and s are not modified.
func ApplyToPod(pod *corev1.Pod, s *appsv1alpha1.WorkloadSpreadSubset) (*corev1.Pod, error) {
	out := pod.DeepCopy()
	if len(s.Tolerations) > 0 {
		out.Spec.Tolerations = append(out.Spec.Tolerations, deepCopyTolerations(s.Tolerations)...)
	}
	affinity := nodeAffinity(&out.Spec)
	for _, p := range s.PreferredNodeSelectorTerms {
		affinity.PreferredDuringSchedulingIgnoredDuringExecution = append(
			affinity.PreferredDuringSchedulingIgnoredDuringExecution, *p.DeepCopy())
	}
	if s.RequiredNodeSelectorTerm != nil {
		required := requiredSelector(&out.Spec)
		required.NodeSelectorTerms = andTerm(required.NodeSelectorTerms, s.RequiredNodeSelectorTerm)
	}
	if s.Patch.Raw == nil {
		return out, nil
	}
	patched, err := strategicMerge(out, s.Patch.Raw)
	if err != nil {
		return nil, err
	}
	if patched.Spec.PriorityClassName != out.Spec.PriorityClassName {
		patched.Spec.Priority = nil
	}
	return patched, nil
}

// andTerm ANDs term into each of terms, or returns term alone when terms is empty. The result
// shares no memory with term.
func andTerm(terms []corev1.NodeSelectorTerm, term *corev1.NodeSelectorTerm) []corev1.NodeSelectorTerm {
	if len(terms) == 0 {
		return []corev1.NodeSelectorTerm{*term.DeepCopy()}
	}
	for i := range terms {
		terms[i].MatchExpressions = append(terms[i].MatchExpressions, deepCopyRequirements(term.MatchExpressions)...)
		terms[i].MatchFields = append(terms[i].MatchFields, deepCopyRequirements(term.MatchFields)...)
	}
	return terms
}

func nodeAffinity(spec *corev1.PodSpec) *corev1.NodeAffinity {
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	return spec.Affinity.NodeAffinity
}

func requiredSelector(spec *corev1.PodSpec) *corev1.NodeSelector {
	affinity := nodeAffinity(spec)
	if affinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		affinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	return affinity.RequiredDuringSchedulingIgnoredDuringExecution
}

func deepCopyRequirements(in []corev1.NodeSelectorRequirement) []corev1.NodeSelectorRequirement {
	out := make([]corev1.NodeSelectorRequirement, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

func deepCopyTolerations(in []corev1.Toleration) []corev1.Toleration {
	out := make([]corev1.Toleration, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
