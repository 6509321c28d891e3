package proberules

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// MarkerStatus is a marker's status: the eligible pods it selects (pods on nodes Kruise knows;
// OpenKruise counts the same set), at the marker's generation.
func MarkerStatus(marker *v1alpha1.PodProbeMarker, pods []*corev1.Pod) v1alpha1.PodProbeMarkerStatus {
	st := v1alpha1.PodProbeMarkerStatus{ObservedGeneration: marker.Generation}
	for _, p := range pods {
		if Eligible(p) && Selects(marker, p) {
			st.MatchedPods++
		}
	}
	return st
}

// StatusOf is pod's entry in a NodePodProbe status (matched by UID), or nil.
func StatusOf(status v1alpha1.NodePodProbeStatus, pod *corev1.Pod) *v1alpha1.NodePodProbePodStatus {
	for i := range status.PodProbeStatuses {
		if status.PodProbeStatuses[i].UID == string(pod.UID) {
			return &status.PodProbeStatuses[i]
		}
	}
	return nil
}
