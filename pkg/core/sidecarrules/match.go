package sidecarrules

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Matches reports whether set selects pod, as OpenKruise decides it: the pod's namespace ("" counts
// as "default") must equal the v1alpha1 spec.namespace when one is set (kept on v1beta1 objects in
// the conversion annotation), the namespace's labels must match spec.namespaceSelector when one is
// set (an invalid namespaceSelector matches nothing), and the pod's labels must match
// spec.selector, which must be set and non-empty. An invalid selector is an error.
func Matches(pod *corev1.Pod, set *v1beta1.SidecarSet, namespaceLabels map[string]string) (bool, error) {
	ns := pod.Namespace
	if ns == "" {
		ns = defaultNamespace
	}
	only, err := OnlyNamespace(set)
	if err != nil {
		return false, err
	}
	if only != "" && only != ns {
		return false, nil
	}
	if set.Spec.NamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(set.Spec.NamespaceSelector)
		if err != nil || !sel.Matches(labels.Set(namespaceLabels)) {
			return false, nil
		}
	}
	if set.Spec.Selector == nil {
		return false, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		return false, fmt.Errorf("SidecarSet %s: selector: %w", set.Name, err)
	}
	return !sel.Empty() && sel.Matches(labels.Set(pod.Labels)), nil
}

// OnlyNamespace returns the v1alpha1 spec.namespace of a v1beta1 SidecarSet, kept in the conversion
// annotation, or "" when it has none.
func OnlyNamespace(set *v1beta1.SidecarSet) (string, error) {
	raw, ok := set.Annotations[v1alpha1.ConversionV1alpha1OnlyAnnotation]
	if !ok {
		return "", nil
	}
	var stash struct {
		Spec *struct {
			Namespace string `json:"namespace"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(raw), &stash); err != nil {
		return "", fmt.Errorf("SidecarSet %s: annotation %s: %w", set.Name, v1alpha1.ConversionV1alpha1OnlyAnnotation, err)
	}
	if stash.Spec == nil {
		return "", nil
	}
	return stash.Spec.Namespace, nil
}

// podActive reports whether pod may receive sidecars: it is neither terminating nor finished.
func podActive(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil &&
		pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}
