package sidecarrules

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UpgradeSpec is one SidecarSet's entry in a pod's HashAnnotation or HashWithoutImageAnnotation
// map; its JSON form is OpenKruise's, field for field.
type UpgradeSpec struct {
	// UpdateTimestamp is when the sidecars were injected or last upgraded.
	UpdateTimestamp metav1.Time `json:"updateTimestamp"`
	// Hash is the SidecarSet's hash (SetHash or SetHashWithoutImage) the sidecars were built from.
	Hash string `json:"hash"`
	// SidecarSetName is the SidecarSet's name, also the entry's key.
	SidecarSetName string `json:"sidecarSetName"`
	// SidecarList is the sorted names of the SidecarSet's containers and native-sidecar init
	// containers (hot-upgrade sidecars by their SidecarSet name, not their copies' names).
	SidecarList []string `json:"sidecarList"`
	// ControllerRevision is the SidecarSet revision the sidecars were built from; only the
	// HashAnnotation entry carries it.
	ControllerRevision string `json:"controllerRevision,omitempty"`
}

// PodUpgradeSpecs parses a pod's HashAnnotation or HashWithoutImageAnnotation (key): a JSON map
// from SidecarSet name to UpgradeSpec, or the older map from name to hash, which OpenKruise still
// reads. A missing or empty annotation is an empty map; anything else unparsable is an error.
func PodUpgradeSpecs(pod *corev1.Pod, key string) (map[string]UpgradeSpec, error) {
	specs := map[string]UpgradeSpec{}
	value := pod.Annotations[key]
	if value == "" {
		return specs, nil
	}
	if err := json.Unmarshal([]byte(value), &specs); err == nil {
		return specs, nil
	}
	older := map[string]string{}
	if err := json.Unmarshal([]byte(value), &older); err != nil {
		return nil, fmt.Errorf("pod %s/%s: invalid annotation %s %q: %w", pod.Namespace, pod.Name, key, value, err)
	}
	specs = make(map[string]UpgradeSpec, len(older))
	for name, hash := range older {
		specs[name] = UpgradeSpec{Hash: hash, SidecarSetName: name}
	}
	return specs, nil
}

// encodeUpgradeSpecs is the annotation value of specs: JSON with the names in sorted order.
func encodeUpgradeSpecs(specs map[string]UpgradeSpec) (string, error) {
	raw, err := json.Marshal(specs)
	return string(raw), err
}

// injectedList is the InjectedListAnnotation value for the names already on pod plus added.
func injectedList(pod *corev1.Pod, added []string) string {
	names := map[string]bool{}
	if old := pod.Annotations[InjectedListAnnotation]; old != "" {
		for _, n := range strings.Split(old, ",") {
			names[n] = true
		}
	}
	for _, n := range added {
		names[n] = true
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	return strings.Join(list, ",")
}

// WorkingContainers maps each hot-upgrade sidecar of pod to the copy of it that serves now (its
// WorkingHotUpgradeContainerAnnotation); an unparsable annotation counts as empty.
func WorkingContainers(pod *corev1.Pod) map[string]string { return hotUpgradeWorking(pod) }

// hotUpgradeWorking parses the pod's WorkingHotUpgradeContainerAnnotation; like OpenKruise, an
// unparsable value counts as empty.
func hotUpgradeWorking(pod *corev1.Pod) map[string]string {
	working := map[string]string{}
	if v, ok := pod.Annotations[WorkingHotUpgradeContainerAnnotation]; ok {
		if err := json.Unmarshal([]byte(v), &working); err != nil {
			return map[string]string{}
		}
	}
	return working
}
