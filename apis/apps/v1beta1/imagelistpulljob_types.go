package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ImageListPullJob pulls a list of images onto a chosen set of nodes, running one ImagePullJob per image.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="TOTAL",type="integer",JSONPath=".status.desired",description="How many images the job pulls"
// +kubebuilder:printcolumn:name="SUCCEEDED",type="integer",JSONPath=".status.succeeded",description="How many per-image jobs succeeded"
// +kubebuilder:printcolumn:name="COMPLETED",type="integer",JSONPath=".status.completed",description="How many per-image jobs finished"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the job was created"
type ImageListPullJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the job should pull and where.
	Spec ImageListPullJobSpec `json:"spec,omitempty"`
	// Status is the progress the job has made.
	Status ImageListPullJobStatus `json:"status,omitempty"`
}

// ImageListPullJobSpec is the desired state of an ImageListPullJob.
type ImageListPullJobSpec struct {
	// Images are the references of the images to pull.
	Images []string `json:"images"`

	// ImagePullJobTemplate holds the settings applied to each per-image pull.
	ImagePullJobTemplate `json:",inline"`
}

// ImageListPullJobStatus is the observed state of an ImageListPullJob.
type ImageListPullJobStatus struct {
	// StartTime is when the controller first picked the job up.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the job finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Desired is how many per-image jobs are needed, usually the number of images.
	Desired int32 `json:"desired"`

	// Active is how many per-image jobs are running.
	// +optional
	Active int32 `json:"active,omitempty"`

	// Completed is how many per-image jobs have finished, whether or not they succeeded.
	// +optional
	Completed int32 `json:"completed,omitempty"`

	// Succeeded is how many per-image jobs finished successfully.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// FailedImageStatuses describes the per-image jobs that have failed nodes.
	// +optional
	FailedImageStatuses []*ImageListPullJobFailedImageStatus `json:"failedImageStatuses,omitempty"`
}

// ImageListPullJobFailedImageStatus describes a per-image job with at least one failed node.
type ImageListPullJobFailedImageStatus struct {
	// ImagePullJob is the name of the per-image job.
	// +optional
	ImagePullJob string `json:"imagePullJob,omitempty"`

	// Name is the image the per-image job pulls.
	// +optional
	Name string `json:"name,omitempty"`

	// Message is the per-image job's status summary.
	// +optional
	Message string `json:"message,omitempty"`
}

// ImageListPullJobList is a list of ImageListPullJobs.
// +kubebuilder:object:root=true
type ImageListPullJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the jobs in the list.
	Items []ImageListPullJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ImageListPullJob{}, &ImageListPullJobList{})
}
