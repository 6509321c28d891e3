package topologypin

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
)

// InjectedAnnotation names, on a pod, the PersistentPodState whose topology was injected into it.
const InjectedAnnotation = "kruise.io/injected-persistent-pod-state"

// Topology is what a pod recreated with recorded state gets from spec: the required topology's
// recorded labels as a node selector, and each preferred topology's recorded labels as a
// preferred node affinity term of its weight. Keys the state did not record are left out; a
// preferred term with none is left out (an empty term would prefer every node alike).
func Topology(spec *v1alpha1.PersistentPodStateSpec, state v1alpha1.PersistentPodStatePodState) (map[string]string, []corev1.PreferredSchedulingTerm) {
	var required map[string]string
	if spec.RequiredPersistentTopology != nil {
		for _, k := range spec.RequiredPersistentTopology.NodeTopologyKeys {
			if v, ok := state.NodeTopologyLabels[k]; ok {
				if required == nil {
					required = map[string]string{}
				}
				required[k] = v
			}
		}
	}
	var preferred []corev1.PreferredSchedulingTerm
	for _, term := range spec.PreferredPersistentTopology {
		t := corev1.PreferredSchedulingTerm{Weight: term.Weight}
		for _, k := range term.Preference.NodeTopologyKeys {
			if v, ok := state.NodeTopologyLabels[k]; ok {
				t.Preference.MatchExpressions = append(t.Preference.MatchExpressions,
					corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{v}})
			}
		}
		if len(t.Preference.MatchExpressions) > 0 {
			preferred = append(preferred, t)
		}
	}
	return required, preferred
}

// Targets reports whether pod is controlled by pps's targetRef workload (same group, kind and
// name; any version). Whether the kind is supported is the entries' matter (Entries).
func Targets(pps *v1alpha1.PersistentPodState, pod *corev1.Pod) bool {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return false
	}
	want, _ := workloadfinder.PodStateTarget(pps.Spec.TargetReference)
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return want.Kind != "" && err == nil && (schema.GroupKind{Group: gv.Group, Kind: ref.Kind}) == want && ref.Name == pps.Spec.TargetReference.Name
}

// Inject brings pod, controlled by pps's target, to its recorded topology and names pps in
// InjectedAnnotation; it reports false, leaving pod as it is, when pps recorded no topology for a
// pod of that name. A nodeSelector entry of the pod under the same key is overwritten.
func Inject(pod *corev1.Pod, pps *v1alpha1.PersistentPodState) bool {
	state, ok := pps.Status.PodStates[pod.Name]
	if !ok || len(state.NodeTopologyLabels) == 0 {
		return false
	}
	required, preferred := Topology(&pps.Spec, state)
	if len(required) == 0 && len(preferred) == 0 {
		return false
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[InjectedAnnotation] = pps.Name
	if len(required) > 0 && pod.Spec.NodeSelector == nil {
		pod.Spec.NodeSelector = map[string]string{}
	}
	for k, v := range required {
		pod.Spec.NodeSelector[k] = v
	}
	if len(preferred) > 0 {
		if pod.Spec.Affinity == nil {
			pod.Spec.Affinity = &corev1.Affinity{}
		}
		if pod.Spec.Affinity.NodeAffinity == nil {
			pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
		}
		na := pod.Spec.Affinity.NodeAffinity
		na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, preferred...)
	}
	return true
}
