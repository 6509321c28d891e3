package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ImagePullJobImagePullPolicy says when an image that may already be on a node is pulled again.
type ImagePullJobImagePullPolicy string

const (
	// ImagePullJobPullAlways pulls the image every time, even if the node already has it.
	ImagePullJobPullAlways ImagePullJobImagePullPolicy = "Always"
	// ImagePullJobPullIfNotPresent pulls the image only when the node does not have it yet.
	ImagePullJobPullIfNotPresent ImagePullJobImagePullPolicy = "IfNotPresent"
)

// ImagePullJobCompletionPolicyType says whether a pull job ever finishes.
type ImagePullJobCompletionPolicyType string

const (
	// ImagePullJobCompletionAlways makes the job finish once every selected node has tried the pull.
	ImagePullJobCompletionAlways ImagePullJobCompletionPolicyType = "Always"
	// ImagePullJobCompletionNever keeps the job running, also pulling on nodes that join later.
	ImagePullJobCompletionNever ImagePullJobCompletionPolicyType = "Never"
)

// ImagePullJob pulls one image onto a chosen set of nodes.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="TOTAL",type="integer",JSONPath=".status.desired",description="How many nodes the job selected"
// +kubebuilder:printcolumn:name="ACTIVE",type="integer",JSONPath=".status.active",description="How many pull tasks are running"
// +kubebuilder:printcolumn:name="SUCCEED",type="integer",JSONPath=".status.succeeded",description="How many pull tasks succeeded"
// +kubebuilder:printcolumn:name="FAILED",type="integer",JSONPath=".status.failed",description="How many pull tasks failed"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the job was created"
// +kubebuilder:printcolumn:name="MESSAGE",type="string",JSONPath=".status.message",description="Why the job failed, if it did"
type ImagePullJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the job should pull and where.
	Spec ImagePullJobSpec `json:"spec,omitempty"`
	// Status is the progress the job has made.
	Status ImagePullJobStatus `json:"status,omitempty"`
}

// ImagePullJobSpec is the desired state of an ImagePullJob.
type ImagePullJobSpec struct {
	// Image is the reference of the image to pull.
	Image string `json:"image"`

	// ImagePullJobTemplate holds the settings shared with ImageListPullJob.
	ImagePullJobTemplate `json:",inline"`
}

// ImagePullJobTemplate holds the pull settings that ImagePullJob and ImageListPullJob have in common.
type ImagePullJobTemplate struct {
	// PullSecrets names secrets in the job's namespace that carry registry credentials for the pull.
	// +optional
	PullSecrets []string `json:"pullSecrets,omitempty"`

	// Selector picks the nodes to pull on; when unset every node is picked.
	// +optional
	Selector *ImagePullJobNodeSelector `json:"selector,omitempty"`

	// PodSelector picks the nodes that run pods matching it; it cannot be combined with Selector.
	// +optional
	PodSelector *ImagePullJobPodSelector `json:"podSelector,omitempty"`

	// Parallelism caps how many nodes pull at the same time, as a count or a percentage; 0 pauses the job.
	// Unset means 1.
	// +optional
	Parallelism *intstr.IntOrString `json:"parallelism,omitempty"`

	// PullPolicy tunes each pull task (timeout and retries); unset fields take system defaults.
	// +optional
	PullPolicy *ImagePullJobPullPolicy `json:"pullPolicy,omitempty"`

	// CompletionPolicy says when and how the job finishes.
	CompletionPolicy ImagePullJobCompletionPolicy `json:"completionPolicy"`

	// SandboxConfig is extra metadata handed to the container runtime's image pull call.
	// +optional
	SandboxConfig *ImagePullJobSandboxConfig `json:"sandboxConfig,omitempty"`

	// ImagePullPolicy is Always or IfNotPresent (the default).
	// +optional
	ImagePullPolicy ImagePullJobImagePullPolicy `json:"imagePullPolicy,omitempty"`
}

// ImagePullJobNodeSelector selects nodes by name and/or by labels.
// +structType=atomic
type ImagePullJobNodeSelector struct {
	// Names lists nodes to pull on by name.
	// +optional
	Names []string `json:"names,omitempty"`

	// LabelSelector selects nodes by their labels.
	metav1.LabelSelector `json:",inline"`
}

// ImagePullJobPodSelector selects the nodes where pods with matching labels run.
// +structType=atomic
type ImagePullJobPodSelector struct {
	// LabelSelector selects pods by their labels.
	metav1.LabelSelector `json:",inline"`
}

// ImagePullJobPullPolicy tunes a single pull task.
type ImagePullJobPullPolicy struct {
	// TimeoutSeconds bounds one pull attempt; defaults to 600.
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// BackoffLimit is how many times a failed pull is retried before the task fails; defaults to 3.
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
}

// ImagePullJobCompletionPolicy says when a pull job finishes and how long it is kept afterwards.
type ImagePullJobCompletionPolicy struct {
	// Type is Always (the default) or Never.
	// +optional
	Type ImagePullJobCompletionPolicyType `json:"type,omitempty"`

	// ActiveDeadlineSeconds bounds, from the start time, how long the job may run before it is stopped.
	// Only used with type Always.
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// TTLSecondsAfterFinished is how long a finished job is kept before it is deleted; unset keeps it forever,
	// 0 deletes it right away. Only used with type Always.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// ImagePullJobSandboxConfig is metadata passed to the container runtime along with an image pull request.
type ImagePullJobSandboxConfig struct {
	// Labels are passed as sandbox labels.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations are passed as sandbox annotations.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ImagePullJobStatus is the observed state of an ImagePullJob.
type ImagePullJobStatus struct {
	// StartTime is when the controller first picked the job up.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the job finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Desired is how many pull tasks the job needs, usually the number of selected nodes.
	Desired int32 `json:"desired"`

	// Active is how many pull tasks are running.
	// +optional
	Active int32 `json:"active,omitempty"`

	// Succeeded is how many pull tasks ended successfully.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// Failed is how many pull tasks ended in failure.
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// Message is a short human-readable summary of the job's state.
	// +optional
	Message string `json:"message,omitempty"`

	// FailedNodes lists the nodes where the pull failed.
	// +optional
	FailedNodes []string `json:"failedNodes,omitempty"`
}

// ImagePullJobList is a list of ImagePullJobs.
// +kubebuilder:object:root=true
type ImagePullJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the jobs in the list.
	Items []ImagePullJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ImagePullJob{}, &ImagePullJobList{})
}
