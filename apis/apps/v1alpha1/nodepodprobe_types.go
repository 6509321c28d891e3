package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePodProbeSpec lists, for one node, the pods whose containers kruise-daemon must probe.
type NodePodProbeSpec struct {
	// PodProbes holds one entry per pod on the node that has probes to run.
	// +optional
	PodProbes []NodePodProbePodProbe `json:"podProbes,omitempty"`
}

// NodePodProbePodProbe identifies a pod on the node and the probes to run against its containers.
type NodePodProbePodProbe struct {
	// Name is the pod's name.
	Name string `json:"name"`
	// Namespace is the pod's namespace.
	Namespace string `json:"namespace"`
	// UID is the pod's UID, so that a re-created pod of the same name is told apart.
	UID string `json:"uid"`
	// IP is the pod's IP address, the target of network probes.
	IP string `json:"IP"`
	// Probes are the container probes to run in this pod.
	// +optional
	Probes []NodePodProbeContainerProbe `json:"probes,omitempty"`
}

// NodePodProbeContainerProbe is one named probe against one container of a pod.
type NodePodProbeContainerProbe struct {
	// Name identifies the probe; it is unique within the pod and is typically
	// "<PodProbeMarker name>#<probe name>".
	Name string `json:"name"`
	// ContainerName is the container the probe runs against.
	ContainerName string `json:"containerName"`
	// Probe is the check to run, with the usual Kubernetes probe handlers and timings.
	Probe PodProbeMarkerProbeSpec `json:"probe"`
}

// NodePodProbeStatus reports the latest results of the probes kruise-daemon runs on the node.
type NodePodProbeStatus struct {
	// PodProbeStatuses holds the probe results of each pod.
	// +optional
	PodProbeStatuses []NodePodProbePodStatus `json:"podProbeStatuses,omitempty"`
}

// NodePodProbePodStatus holds the probe results of one pod.
type NodePodProbePodStatus struct {
	// Name is the pod's name.
	Name string `json:"name"`
	// Namespace is the pod's namespace.
	Namespace string `json:"namespace"`
	// UID is the pod's UID.
	UID string `json:"uid"`
	// ProbeStates holds the latest result of each of the pod's probes.
	// +optional
	ProbeStates []NodePodProbeContainerProbeState `json:"probeStates,omitempty"`
}

// NodePodProbeContainerProbeState is the latest result of one probe.
type NodePodProbeContainerProbeState struct {
	// Name is the probe's name, as in the spec.
	Name string `json:"name"`
	// State is the probe's latest outcome.
	State PodProbeMarkerState `json:"state"`
	// LastProbeTime is when the probe last ran.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// LastTransitionTime is when State last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Message is a human-readable detail about the latest outcome, such as the probe's output.
	// +optional
	Message string `json:"message,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster

// NodePodProbe is the per-node work list of container probes for kruise-daemon, named after the
// node, together with the results the daemon reports back.
type NodePodProbe struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec lists the probes to run on the node.
	Spec NodePodProbeSpec `json:"spec,omitempty"`
	// Status reports the probes' latest results.
	Status NodePodProbeStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// NodePodProbeList is a list of NodePodProbe objects.
type NodePodProbeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the NodePodProbe objects.
	Items []NodePodProbe `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodePodProbe{}, &NodePodProbeList{})
}
