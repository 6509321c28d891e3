package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeImagePullPhase is the stage a pull task on a node has reached.
type NodeImagePullPhase string

const (
	// NodeImagePullWaiting means the task has not started yet.
	NodeImagePullWaiting NodeImagePullPhase = "Waiting"
	// NodeImagePullPulling means the image is being pulled.
	NodeImagePullPulling NodeImagePullPhase = "Pulling"
	// NodeImagePullSucceeded means the image was pulled.
	NodeImagePullSucceeded NodeImagePullPhase = "Succeeded"
	// NodeImagePullFailed means the pull gave up.
	NodeImagePullFailed NodeImagePullPhase = "Failed"
)

// NodeImageSyncStatusPhase is the outcome of a node's first round of pulls.
type NodeImageSyncStatusPhase string

// NodeImageReferenceObjectMode says how a referenced pull secret is synced to the node.
type NodeImageReferenceObjectMode string

const (
	// NodeImageReferenceObjectModeBatch marks a secret synced once and shared by every job that uses it.
	NodeImageReferenceObjectModeBatch NodeImageReferenceObjectMode = "batch"
)

// NodeImage is the per-node record of the images that should be on one node and how their pulls went.
// Its name is the node's name.
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="DESIRED",type="integer",JSONPath=".status.desired",description="How many images the node should have"
// +kubebuilder:printcolumn:name="PULLING",type="integer",JSONPath=".status.pulling",description="How many pulls are in progress"
// +kubebuilder:printcolumn:name="SUCCEED",type="integer",JSONPath=".status.succeeded",description="How many pulls succeeded"
// +kubebuilder:printcolumn:name="FAILED",type="integer",JSONPath=".status.failed",description="How many pulls failed"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the object was created"
type NodeImage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the set of images the node should pull.
	Spec NodeImageSpec `json:"spec,omitempty"`
	// Status is the pull progress reported from the node.
	Status NodeImageStatus `json:"status,omitempty"`
}

// MaxNodeImageImages is how many images one NodeImage spec may list (spec.images entries).
const MaxNodeImageImages = 256

// NodeImageSpec is the desired state of a NodeImage.
type NodeImageSpec struct {
	// Images maps an image name (without tag) to what should be pulled of it; at most 256 entries.
	// +optional
	Images map[string]NodeImageImageSpec `json:"images,omitempty"`
}

// NodeImageImageSpec says which tags of one image to pull and with which credentials.
type NodeImageImageSpec struct {
	// PullSecrets refers to secrets carrying registry credentials for this image.
	// +optional
	PullSecrets []NodeImageReferenceObject `json:"pullSecrets,omitempty"`

	// Tags are the tags of this image to pull.
	Tags []NodeImageTagSpec `json:"tags"`

	// SandboxConfig is extra metadata handed to the container runtime's image pull call.
	// +optional
	SandboxConfig *ImagePullJobSandboxConfig `json:"sandboxConfig,omitempty"`
}

// NodeImageReferenceObject names an object by namespace and name ("<namespace>/<name>").
type NodeImageReferenceObject struct {
	// Namespace of the object.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the object.
	// +optional
	Name string `json:"name,omitempty"`

	// Mode marks how the referenced secret is synced to the node; "batch" secrets are shared across
	// jobs and cleaned up together with the image entry.
	// +optional
	Mode NodeImageReferenceObjectMode `json:"mode,omitempty"`
}

// NodeImageTagSpec says how one tag of an image is pulled.
type NodeImageTagSpec struct {
	// Tag is the image tag.
	Tag string `json:"tag"`

	// CreatedAt is when this tag was added.
	// +optional
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`

	// PullPolicy tunes the pull task for this tag; unset fields take system defaults.
	// +optional
	PullPolicy *NodeImageTagPullPolicy `json:"pullPolicy,omitempty"`

	// OwnerReferences point at the objects (such as pull jobs) that asked for this tag.
	// +optional
	OwnerReferences []corev1.ObjectReference `json:"ownerReferences,omitempty"`

	// Version is an opaque counter, set by the system, that changes whenever this tag's spec changes.
	// +optional
	Version int64 `json:"version,omitempty"`

	// ImagePullPolicy is Always or IfNotPresent (the default).
	// +optional
	ImagePullPolicy ImagePullJobImagePullPolicy `json:"imagePullPolicy,omitempty"`
}

// NodeImageTagPullPolicy tunes the pull task for one tag.
type NodeImageTagPullPolicy struct {
	// TimeoutSeconds bounds one pull attempt; defaults to 600.
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// BackoffLimit is how many times a failed pull is retried before the task fails; defaults to 3.
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// TTLSecondsAfterFinished is how long a finished task is kept before it is dropped; unset keeps it,
	// 0 drops it right away.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// ActiveDeadlineSeconds bounds, from its start, how long the task may run; unset means no bound.
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
}

// NodeImageStatus is the observed state of a NodeImage.
type NodeImageStatus struct {
	// Desired is how many pull tasks there are, usually the number of image tags in the spec.
	Desired int32 `json:"desired"`

	// Pulling is how many pull tasks are unfinished.
	// +optional
	Pulling int32 `json:"pulling,omitempty"`

	// Waiting is how many pull tasks have not started.
	// +optional
	Waiting int32 `json:"waiting,omitempty"`

	// Succeeded is how many pull tasks succeeded.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// Failed is how many pull tasks failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// FirstSyncStatus records when the node's first round of pulls finished, so that systems
	// preparing a new node can wait for it.
	// +optional
	FirstSyncStatus *NodeImageSyncStatus `json:"firstSyncStatus,omitempty"`

	// ImageStatuses maps an image name to the status of its pull tasks.
	// +optional
	ImageStatuses map[string]NodeImageImageStatus `json:"imageStatuses,omitempty"`
}

// NodeImageSyncStatus is the outcome of a node's first round of pulls.
type NodeImageSyncStatus struct {
	// SyncAt is when the round finished.
	// +optional
	SyncAt *metav1.Time `json:"syncAt,omitempty"`

	// Status is the outcome.
	// +optional
	Status NodeImageSyncStatusPhase `json:"status,omitempty"`

	// Message explains the outcome.
	// +optional
	Message string `json:"message,omitempty"`
}

// NodeImageImageStatus is the pull status of all tags of one image.
type NodeImageImageStatus struct {
	// Tags are the statuses of the pull tasks, one per tag.
	Tags []NodeImageTagStatus `json:"tags"`
}

// NodeImageTagStatus is the pull status of one image tag on the node.
type NodeImageTagStatus struct {
	// Tag is the image tag.
	Tag string `json:"tag"`

	// Phase is the stage the pull task has reached.
	Phase NodeImagePullPhase `json:"phase"`

	// Progress is the pull progress in percent (0-100); it may go back when a pull is retried.
	// +optional
	Progress int32 `json:"progress,omitempty"`

	// StartTime is when the node started the pull task.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the pull task finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Version is the tag spec version the node acted on.
	// +optional
	Version int64 `json:"version,omitempty"`

	// ImageID is the ID of the pulled image.
	// +optional
	ImageID string `json:"imageID,omitempty"`

	// Message is a short human-readable note about the task.
	// +optional
	Message string `json:"message,omitempty"`
}

// NodeImageList is a list of NodeImages.
// +kubebuilder:object:root=true
type NodeImageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the NodeImages in the list.
	Items []NodeImage `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodeImage{}, &NodeImageList{})
}
