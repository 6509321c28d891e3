package v1alpha1

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	// ContainerRecreateRequestPodUIDKey is the label holding the UID of the request's pod.
	ContainerRecreateRequestPodUIDKey = "crr.apps.kruise.io/pod-uid"
	// ContainerRecreateRequestNodeNameKey is the label holding the name of the pod's node.
	ContainerRecreateRequestNodeNameKey = "crr.apps.kruise.io/node-name"
	// ContainerRecreateRequestActiveKey is the label present while the request is not finished.
	ContainerRecreateRequestActiveKey = "crr.apps.kruise.io/active"
	// ContainerRecreateRequestUnreadyAcquiredKey is the annotation recording when the pod was seen
	// not ready for a request with unreadyGracePeriodSeconds; the grace period counts from it.
	ContainerRecreateRequestUnreadyAcquiredKey = "crr.apps.kruise.io/unready-acquired"
	// ContainerRecreateRequestUnreadyPodKey is the pod annotation, naming a request, that holds the
	// pod's KruisePodReady condition False while the request recreates its containers (a Kruise
	// addition: OpenKruise records it in the condition's message).
	ContainerRecreateRequestUnreadyPodKey = "crr.apps.kruise.io/unready"
)

// ContainerRecreateRequestSpec says which containers of which pod to recreate, and how.
type ContainerRecreateRequestSpec struct {
	// PodName is the name of the pod, in the request's namespace, whose containers are recreated.
	PodName string `json:"podName"`
	// Containers lists the containers to recreate.
	Containers []ContainerRecreateRequestContainer `json:"containers"`
	// Strategy tunes how the containers are recreated.
	// +optional
	Strategy *ContainerRecreateRequestStrategy `json:"strategy,omitempty"`
	// ActiveDeadlineSeconds is how long the request may run before it is marked failed.
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// TTLSecondsAfterFinished is how long a finished request is kept before it is deleted.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// ContainerRecreateRequestContainer names one container to recreate.
type ContainerRecreateRequestContainer struct {
	// Name is the container's name in the pod spec.
	Name string `json:"name"`
	// PreStop is the hook run before the container is stopped; it is filled in from the pod spec
	// by the webhook and should not be set by users.
	// +optional
	PreStop *ContainerRecreateRequestPreStop `json:"preStop,omitempty"`
	// Ports are the container's ports, copied from the pod spec so that the hook can name them.
	// +optional
	Ports []v1.ContainerPort `json:"ports,omitempty"`
	// StatusContext records the container's runtime state when the request was made.
	// +optional
	StatusContext *ContainerRecreateRequestContainerContext `json:"statusContext,omitempty"`
}

// ContainerRecreateRequestPreStop is the action run before a container is stopped.
type ContainerRecreateRequestPreStop struct {
	// Exec runs a command inside the container.
	// +optional
	Exec *v1.ExecAction `json:"exec,omitempty"`
	// HTTPGet sends an HTTP GET request.
	// +optional
	HTTPGet *ContainerRecreateRequestHTTPGetAction `json:"httpGet,omitempty"`
	// TCPSocket opens a TCP connection.
	// +optional
	TCPSocket *v1.TCPSocketAction `json:"tcpSocket,omitempty"`
}

// ContainerRecreateRequestHTTPGetAction is an HTTP GET request sent to the container.
type ContainerRecreateRequestHTTPGetAction struct {
	// Path is the HTTP path to request.
	// +optional
	Path string `json:"path,omitempty"`
	// Port is the port number or name to connect to.
	Port intstr.IntOrString `json:"port"`
	// Host is the host to connect to; the pod IP when empty.
	// +optional
	Host string `json:"host,omitempty"`
	// Scheme is HTTP or HTTPS; HTTP when empty.
	// +optional
	Scheme v1.URIScheme `json:"scheme,omitempty"`
	// HTTPHeaders are extra headers sent with the request.
	// +optional
	// +listType=atomic
	HTTPHeaders []v1.HTTPHeader `json:"httpHeaders,omitempty"`
}

// ContainerRecreateRequestContainerContext identifies the container instance a request targets.
type ContainerRecreateRequestContainerContext struct {
	// ContainerID is the runtime's ID of the container.
	ContainerID string `json:"containerID"`
	// RestartCount is the container's restart count when the request was made.
	RestartCount int32 `json:"restartCount"`
}

// ContainerRecreateRequestStrategy tunes how containers are recreated.
type ContainerRecreateRequestStrategy struct {
	// FailurePolicy says whether the remaining containers are still recreated after one fails.
	// +optional
	FailurePolicy ContainerRecreateRequestFailurePolicyType `json:"failurePolicy,omitempty"`
	// OrderedRecreate recreates the containers one after the other, waiting for each to run again.
	// +optional
	OrderedRecreate bool `json:"orderedRecreate,omitempty"`
	// ForceRecreate kills the container even while the previous instance is still starting.
	// +optional
	ForceRecreate bool `json:"forceRecreate,omitempty"`
	// TerminationGracePeriodSeconds is the time given to a container to stop; the pod's own value is
	// used when unset.
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// UnreadyGracePeriodSeconds is how long the pod is held NotReady before containers are stopped.
	// +optional
	UnreadyGracePeriodSeconds *int64 `json:"unreadyGracePeriodSeconds,omitempty"`
	// MinStartedSeconds is how long a recreated container must run before it counts as recreated.
	// +optional
	MinStartedSeconds int32 `json:"minStartedSeconds,omitempty"`
}

// ContainerRecreateRequestFailurePolicyType is the reaction to a container that failed to recreate.
type ContainerRecreateRequestFailurePolicyType string

const (
	// ContainerRecreateRequestFailurePolicyFail stops the request at the first failure.
	ContainerRecreateRequestFailurePolicyFail ContainerRecreateRequestFailurePolicyType = "Fail"
	// ContainerRecreateRequestFailurePolicyIgnore goes on with the remaining containers.
	ContainerRecreateRequestFailurePolicyIgnore ContainerRecreateRequestFailurePolicyType = "Ignore"
)

// ContainerRecreateRequestStatus is the observed state of a ContainerRecreateRequest.
type ContainerRecreateRequestStatus struct {
	// Phase is where the request stands.
	Phase ContainerRecreateRequestPhase `json:"phase"`
	// CompletionTime is when the request finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Message explains the phase in human words.
	// +optional
	Message string `json:"message,omitempty"`
	// ContainerRecreateStates is the progress of each container.
	// +optional
	ContainerRecreateStates []ContainerRecreateRequestContainerRecreateState `json:"containerRecreateStates,omitempty"`
}

// ContainerRecreateRequestPhase is the phase of a request or of one of its containers.
type ContainerRecreateRequestPhase string

const (
	// ContainerRecreateRequestPending: not started yet.
	ContainerRecreateRequestPending ContainerRecreateRequestPhase = "Pending"
	// ContainerRecreateRequestRecreating: containers are being recreated.
	ContainerRecreateRequestRecreating ContainerRecreateRequestPhase = "Recreating"
	// ContainerRecreateRequestSucceeded: every container was recreated.
	ContainerRecreateRequestSucceeded ContainerRecreateRequestPhase = "Succeeded"
	// ContainerRecreateRequestFailed: at least one container could not be recreated.
	ContainerRecreateRequestFailed ContainerRecreateRequestPhase = "Failed"
	// ContainerRecreateRequestCompleted: the request is done (used for the whole request).
	ContainerRecreateRequestCompleted ContainerRecreateRequestPhase = "Completed"
)

// ContainerRecreateRequestContainerRecreateState is the progress of one container.
type ContainerRecreateRequestContainerRecreateState struct {
	// Name is the container's name.
	Name string `json:"name"`
	// Phase is where the container's recreation stands.
	Phase ContainerRecreateRequestPhase `json:"phase"`
	// Message explains the phase in human words.
	// +optional
	Message string `json:"message,omitempty"`
	// IsKilled is true once the old container instance was stopped.
	// +optional
	IsKilled bool `json:"isKilled,omitempty"`
}

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=crr
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.phase",description="Phase of the request."
// +kubebuilder:printcolumn:name="POD",type="string",JSONPath=".spec.podName",description="Pod whose containers are recreated."
// +kubebuilder:printcolumn:name="NODE",type="string",JSONPath=".metadata.labels.crr\\.apps\\.kruise\\.io/node-name",description="Node of the pod."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."

// ContainerRecreateRequest asks kruise-daemon to restart some containers of a pod in place.
type ContainerRecreateRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to recreate.
	Spec ContainerRecreateRequestSpec `json:"spec,omitempty"`
	// Status is the observed progress.
	Status ContainerRecreateRequestStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ContainerRecreateRequestList is a list of ContainerRecreateRequest.
type ContainerRecreateRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the requests.
	Items []ContainerRecreateRequest `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ContainerRecreateRequest{}, &ContainerRecreateRequestList{})
}
