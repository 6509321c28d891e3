package pub

import "strings"

// PubUnavailablePodLabelPrefix prefixes pod labels that mark a pod unavailable to
// PodUnavailableBudgets whatever its readiness (any value).
const PubUnavailablePodLabelPrefix = "unavailable-pod.kruise.io/"

// HasUnavailableLabel reports whether labels hold a PubUnavailablePodLabelPrefix label.
func HasUnavailableLabel(labels map[string]string) bool {
	for k := range labels {
		if strings.HasPrefix(k, PubUnavailablePodLabelPrefix) {
			return true
		}
	}
	return false
}
