package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PodProbeMarkerState is the outcome of a custom container probe.
type PodProbeMarkerState string

const (
	// PodProbeMarkerStateSucceeded means the probe passed.
	PodProbeMarkerStateSucceeded PodProbeMarkerState = "Succeeded"
	// PodProbeMarkerStateFailed means the probe did not pass.
	PodProbeMarkerStateFailed PodProbeMarkerState = "Failed"
)

// PodProbeMarkerSpec selects pods, defines custom probes for their containers, and says how to mark
// the pods according to the probes' outcomes.
type PodProbeMarkerSpec struct {
	// Selector picks the pods, in the object's namespace, that the probes apply to.
	Selector *metav1.LabelSelector `json:"selector"`
	// Probes are the custom probes to run against each selected pod.
	Probes []PodProbeMarkerProbe `json:"probes"`
}

// PodProbeMarkerProbe is one custom probe against one container, and the marks it leads to.
type PodProbeMarkerProbe struct {
	// Name identifies the probe within the PodProbeMarker.
	Name string `json:"name"`
	// ContainerName is the container the probe runs against.
	ContainerName string `json:"containerName"`
	// Probe is the check to run, with the usual Kubernetes probe handlers and timings.
	Probe PodProbeMarkerProbeSpec `json:"probe"`
	// MarkerPolicy says which labels and annotations to put on the pod for each outcome.
	// +optional
	MarkerPolicy []PodProbeMarkerPolicy `json:"markerPolicy,omitempty"`
	// PodConditionType, if set, is the pod condition type that records the probe's outcome.
	// +optional
	PodConditionType string `json:"podConditionType,omitempty"`
}

// PodProbeMarkerProbeSpec is a container probe: one handler (exec, httpGet, tcpSocket or grpc) and
// its timings, with the meaning they have in a Kubernetes container probe. NodePodProbe uses it too.
type PodProbeMarkerProbeSpec struct {
	// Exec runs a command in the container; exit status 0 is success.
	// +optional
	Exec *corev1.ExecAction `json:"exec,omitempty"`
	// HTTPGet sends an HTTP GET request; a 2xx or 3xx status is success.
	// +optional
	HTTPGet *PodProbeMarkerHTTPGetAction `json:"httpGet,omitempty"`
	// TCPSocket opens a TCP connection; connecting is success.
	// +optional
	TCPSocket *corev1.TCPSocketAction `json:"tcpSocket,omitempty"`
	// GRPC calls the standard gRPC health check; SERVING is success.
	// +optional
	GRPC *PodProbeMarkerGRPCAction `json:"grpc,omitempty"`
	// InitialDelaySeconds is how long after the container starts the first probe runs.
	// +optional
	InitialDelaySeconds int32 `json:"initialDelaySeconds,omitempty"`
	// TimeoutSeconds is how long one probe may take before it counts as failed.
	// +optional
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
	// PeriodSeconds is the interval between probes.
	// +optional
	PeriodSeconds int32 `json:"periodSeconds,omitempty"`
	// SuccessThreshold is how many consecutive passes turn a failed probe successful.
	// +optional
	SuccessThreshold int32 `json:"successThreshold,omitempty"`
	// FailureThreshold is how many consecutive failures turn a successful probe failed.
	// +optional
	FailureThreshold int32 `json:"failureThreshold,omitempty"`
	// TerminationGracePeriodSeconds is kept for parity with the Kubernetes probe shape.
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
}

// PodProbeMarkerHTTPGetAction is an HTTP GET probe handler.
type PodProbeMarkerHTTPGetAction struct {
	// Path is the request path.
	// +optional
	Path string `json:"path,omitempty"`
	// Port is the container port to connect to, by number or by name.
	Port intstr.IntOrString `json:"port"`
	// Host is the host to connect to; the pod IP when empty.
	// +optional
	Host string `json:"host,omitempty"`
	// Scheme is HTTP (the default) or HTTPS.
	// +optional
	Scheme corev1.URIScheme `json:"scheme,omitempty"`
	// HTTPHeaders are extra request headers.
	// +optional
	// +listType=atomic
	HTTPHeaders []corev1.HTTPHeader `json:"httpHeaders,omitempty"`
}

// PodProbeMarkerGRPCAction is a gRPC health-check probe handler.
type PodProbeMarkerGRPCAction struct {
	// Port is the container port of the gRPC server.
	Port int32 `json:"port"`
	// Service is the service name sent in the health-check request; empty asks about the server as a whole.
	// +optional
	// +kubebuilder:default=""
	Service *string `json:"service,omitempty"`
}

// CoreProbe returns the probe as a Kubernetes core probe, for code that runs it with the
// standard probe machinery.
func (p *PodProbeMarkerProbeSpec) CoreProbe() *corev1.Probe {
	out := &corev1.Probe{
		InitialDelaySeconds:           p.InitialDelaySeconds,
		TimeoutSeconds:                p.TimeoutSeconds,
		PeriodSeconds:                 p.PeriodSeconds,
		SuccessThreshold:              p.SuccessThreshold,
		FailureThreshold:              p.FailureThreshold,
		TerminationGracePeriodSeconds: p.TerminationGracePeriodSeconds,
	}
	if p.Exec != nil {
		out.Exec = p.Exec.DeepCopy()
	}
	if p.TCPSocket != nil {
		out.TCPSocket = p.TCPSocket.DeepCopy()
	}
	if h := p.HTTPGet; h != nil {
		out.HTTPGet = &corev1.HTTPGetAction{Path: h.Path, Port: h.Port, Host: h.Host, Scheme: h.Scheme}
		if h.HTTPHeaders != nil {
			out.HTTPGet.HTTPHeaders = append([]corev1.HTTPHeader(nil), h.HTTPHeaders...)
		}
	}
	if g := p.GRPC; g != nil {
		out.GRPC = &corev1.GRPCAction{Port: g.Port}
		if g.Service != nil {
			s := *g.Service
			out.GRPC.Service = &s
		}
	}
	return out
}

// PodProbeMarkerPolicy gives the labels and annotations a pod carries while a probe has a given outcome.
type PodProbeMarkerPolicy struct {
	// State is the outcome this policy applies to.
	State PodProbeMarkerState `json:"state"`
	// Labels are put on the pod while the probe has that outcome.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are put on the pod while the probe has that outcome.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PodProbeMarkerStatus reports what the controller last saw of a PodProbeMarker.
type PodProbeMarkerStatus struct {
	// ObservedGeneration is the generation of the spec the controller last acted on.
	ObservedGeneration int64 `json:"observedGeneration"`
	// MatchedPods is how many pods the selector matched.
	// +optional
	MatchedPods int64 `json:"matchedPods,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// PodProbeMarker defines custom probes for the containers of selected pods and marks the pods with
// labels, annotations or conditions according to the probes' outcomes.
type PodProbeMarker struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec defines the pods, probes and marks.
	Spec PodProbeMarkerSpec `json:"spec,omitempty"`
	// Status reports the controller's progress.
	Status PodProbeMarkerStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PodProbeMarkerList is a list of PodProbeMarker objects.
type PodProbeMarkerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PodProbeMarker objects.
	Items []PodProbeMarker `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PodProbeMarker{}, &PodProbeMarkerList{})
}
