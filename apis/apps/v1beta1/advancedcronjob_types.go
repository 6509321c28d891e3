package v1beta1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// AdvancedCronJobSpec is what the user asks of an AdvancedCronJob: create a job from Template on
// every tick of Schedule.
type AdvancedCronJobSpec struct {
	// Schedule is the cron expression of when jobs are created.
	// +kubebuilder:validation:MinLength=0
	Schedule string `json:"schedule"`

	// TimeZone is the IANA time zone Schedule is read in; the controller's local zone when unset.
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// StartingDeadlineSeconds is how late a missed run may still be started; runs missed by more
	// count as failed.
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// ConcurrencyPolicy says what happens when a run is due while the previous job still runs:
	// Allow (the default) runs both, Forbid skips the new run, Replace stops the old job first.
	// +optional
	ConcurrencyPolicy AdvancedCronJobConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// Paused stops new runs while true.
	// +optional
	Paused *bool `json:"paused,omitempty"`

	// SuccessfulJobsHistoryLimit is how many successfully finished jobs are kept.
	// +optional
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`

	// FailedJobsHistoryLimit is how many failed jobs are kept.
	// +optional
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`

	// Template is the job created on each run; set exactly one of its members.
	Template AdvancedCronJobTemplate `json:"template"`
}

// AdvancedCronJobConcurrencyPolicy says how an AdvancedCronJob handles overlapping runs.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type AdvancedCronJobConcurrencyPolicy string

const (
	// AdvancedCronJobAllowConcurrent lets runs overlap.
	AdvancedCronJobAllowConcurrent AdvancedCronJobConcurrencyPolicy = "Allow"
	// AdvancedCronJobForbidConcurrent skips a run while the previous job still runs.
	AdvancedCronJobForbidConcurrent AdvancedCronJobConcurrencyPolicy = "Forbid"
	// AdvancedCronJobReplaceConcurrent stops the running job and starts the new one.
	AdvancedCronJobReplaceConcurrent AdvancedCronJobConcurrencyPolicy = "Replace"
)

// AdvancedCronJobTemplate is the job an AdvancedCronJob creates on each run: a batch Job, a
// BroadcastJob or an ImageListPullJob.
type AdvancedCronJobTemplate struct {
	// JobTemplate makes each run create a batch/v1 Job.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	JobTemplate *batchv1.JobTemplateSpec `json:"jobTemplate,omitempty"`

	// BroadcastJobTemplate makes each run create a BroadcastJob.
	// +optional
	BroadcastJobTemplate *AdvancedCronJobBroadcastJobTemplate `json:"broadcastJobTemplate,omitempty"`

	// ImageListPullJobTemplate makes each run create an ImageListPullJob.
	// +optional
	ImageListPullJobTemplate *AdvancedCronJobImageListPullJobTemplate `json:"imageListPullJobTemplate,omitempty"`
}

// AdvancedCronJobTemplateKind names the kind of job an AdvancedCronJob creates.
type AdvancedCronJobTemplateKind string

const (
	// AdvancedCronJobJobTemplateKind: the template is a batch Job.
	AdvancedCronJobJobTemplateKind AdvancedCronJobTemplateKind = "Job"
	// AdvancedCronJobBroadcastJobTemplateKind: the template is a BroadcastJob.
	AdvancedCronJobBroadcastJobTemplateKind AdvancedCronJobTemplateKind = "BroadcastJob"
	// AdvancedCronJobImageListPullJobTemplateKind: the template is an ImageListPullJob.
	AdvancedCronJobImageListPullJobTemplateKind AdvancedCronJobTemplateKind = "ImageListPullJob"
)

// AdvancedCronJobBroadcastJobTemplate is the BroadcastJob created on each run.
type AdvancedCronJobBroadcastJobTemplate struct {
	// ObjectMeta is copied into each created BroadcastJob's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the spec of each created BroadcastJob.
	// +optional
	Spec BroadcastJobSpec `json:"spec,omitempty"`
}

// AdvancedCronJobImageListPullJobTemplate is the ImageListPullJob created on each run.
type AdvancedCronJobImageListPullJobTemplate struct {
	// ObjectMeta is copied into each created ImageListPullJob's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the spec of each created ImageListPullJob.
	// +optional
	Spec AdvancedCronJobImageListPullJobSpec `json:"spec,omitempty"`
}

// AdvancedCronJobImageListPullJobSpec is the spec of an ImageListPullJob as embedded in an
// AdvancedCronJob template: pull a list of images on a set of nodes.
type AdvancedCronJobImageListPullJobSpec struct {
	// Images are the images to pull.
	Images []string `json:"images"`

	// PullSecrets name secrets in the job's namespace used to pull the images.
	// +optional
	PullSecrets []string `json:"pullSecrets,omitempty"`

	// Selector picks the nodes to pull on; all nodes when unset. Excludes PodSelector.
	// +optional
	Selector *AdvancedCronJobImagePullNodeSelector `json:"selector,omitempty"`

	// PodSelector picks the nodes that run the matching pods. Excludes Selector.
	// +optional
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`

	// Parallelism is how many nodes pull at once; 1 when unset, and 0 pauses the job.
	// +optional
	Parallelism *intstr.IntOrString `json:"parallelism,omitempty"`

	// PullPolicy tunes each pull attempt.
	// +optional
	PullPolicy *AdvancedCronJobImagePullPolicy `json:"pullPolicy,omitempty"`

	// CompletionPolicy says when the job finishes and how long it is kept.
	CompletionPolicy AdvancedCronJobImagePullCompletionPolicy `json:"completionPolicy"`

	// SandboxConfig is metadata passed with each pull to the runtime's PullImage call.
	// +optional
	SandboxConfig *AdvancedCronJobImagePullSandboxConfig `json:"sandboxConfig,omitempty"`

	// ImagePullPolicy is Always or IfNotPresent; IfNotPresent when unset.
	// +optional
	ImagePullPolicy AdvancedCronJobImagePullPolicyType `json:"imagePullPolicy,omitempty"`
}

// AdvancedCronJobImagePullPolicyType says whether an image already on the node is pulled again.
type AdvancedCronJobImagePullPolicyType string

const (
	// AdvancedCronJobPullAlways pulls even when the image is present.
	AdvancedCronJobPullAlways AdvancedCronJobImagePullPolicyType = "Always"
	// AdvancedCronJobPullIfNotPresent pulls only when the image is missing.
	AdvancedCronJobPullIfNotPresent AdvancedCronJobImagePullPolicyType = "IfNotPresent"
)

// AdvancedCronJobImagePullNodeSelector picks nodes by name or by labels.
// +structType=atomic
type AdvancedCronJobImagePullNodeSelector struct {
	// Names lists the nodes to pull on.
	// +optional
	Names []string `json:"names,omitempty"`

	// LabelSelector matches node labels.
	metav1.LabelSelector `json:",inline"`
}

// AdvancedCronJobImagePullPolicy tunes each pull attempt of an image pull job.
type AdvancedCronJobImagePullPolicy struct {
	// BackoffLimit is how many retries a pull gets before it counts as failed; 3 when unset.
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// TimeoutSeconds is how long one pull may take; 600 when unset.
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}

// AdvancedCronJobImagePullCompletionPolicy says when an image pull job finishes and how long it
// is kept afterwards.
type AdvancedCronJobImagePullCompletionPolicy struct {
	// Type is Always or Never; Always when unset.
	// +optional
	Type AdvancedCronJobImagePullCompletionPolicyType `json:"type,omitempty"`

	// ActiveDeadlineSeconds is how long after its start the job may stay active before it is
	// stopped; only for type Always.
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// TTLSecondsAfterFinished is how long a finished job is kept before it is deleted; unset keeps it
	// forever. Only for type Always.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// AdvancedCronJobImagePullCompletionPolicyType names a completion policy of an image pull job.
type AdvancedCronJobImagePullCompletionPolicyType string

const (
	// AdvancedCronJobImagePullCompletionAlways finishes the job once every node has pulled (or the
	// deadline has passed).
	AdvancedCronJobImagePullCompletionAlways AdvancedCronJobImagePullCompletionPolicyType = "Always"
	// AdvancedCronJobImagePullCompletionNever keeps the job running, so new nodes pull too.
	AdvancedCronJobImagePullCompletionNever AdvancedCronJobImagePullCompletionPolicyType = "Never"
)

// AdvancedCronJobImagePullSandboxConfig is metadata handed to the runtime with each image pull.
type AdvancedCronJobImagePullSandboxConfig struct {
	// Labels are passed as the pull sandbox's labels.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are passed as the pull sandbox's annotations.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// AdvancedCronJobStatus is the observed state of an AdvancedCronJob.
type AdvancedCronJobStatus struct {
	// Type is the kind of job the template creates.
	// +optional
	Type AdvancedCronJobTemplateKind `json:"type,omitempty"`

	// Active references the jobs of this cron job that are running now.
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`

	// LastScheduleTime is when a job was last created on schedule.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
}

// AdvancedCronJob creates a batch Job, BroadcastJob or ImageListPullJob on a cron schedule.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=acj,scope=Namespaced
// +kubebuilder:printcolumn:name="Schedule",type="string",JSONPath=".spec.schedule",description="The cron schedule."
// +kubebuilder:printcolumn:name="Type",type="string",JSONPath=".status.type",description="The kind of job created."
// +kubebuilder:printcolumn:name="LastScheduleTime",type="date",JSONPath=".status.lastScheduleTime",description="When a job was last created on schedule."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the object was created."
type AdvancedCronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired behaviour of the cron job.
	Spec AdvancedCronJobSpec `json:"spec,omitempty"`
	// Status is the observed state of the cron job.
	Status AdvancedCronJobStatus `json:"status,omitempty"`
}

// AdvancedCronJobList is a list of AdvancedCronJobs.
// +kubebuilder:object:root=true
type AdvancedCronJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the AdvancedCronJobs.
	Items []AdvancedCronJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AdvancedCronJob{}, &AdvancedCronJobList{})
}
