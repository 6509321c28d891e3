package v1alpha1

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EphemeralJobSpec says which pods get which ephemeral containers, and how many at a time.
type EphemeralJobSpec struct {
	// Selector picks, by label, the pods in the job's namespace that get the ephemeral containers.
	Selector *metav1.LabelSelector `json:"selector"`
	// Replicas is how many matching pods get the containers; all matching pods when unset.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Parallelism is how many pods may run the containers at the same time; 1 when unset.
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`
	// Template holds the ephemeral containers to add.
	Template EphemeralJobContainerTemplateSpec `json:"template"`
	// Paused stops the job from starting containers in more pods.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// ActiveDeadlineSeconds is how long the job may run before it is marked failed.
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// TTLSecondsAfterFinished is how long a finished job is kept before it is deleted.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// EphemeralJobContainerTemplateSpec lists the ephemeral containers a job adds to each pod.
type EphemeralJobContainerTemplateSpec struct {
	// EphemeralContainers are added to each chosen pod.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	EphemeralContainers []v1.EphemeralContainer `json:"ephemeralContainers"`
}

// EphemeralJobPhase is where a job stands.
type EphemeralJobPhase string

const (
	// EphemeralJobSucceeded: every chosen pod ran the containers to success.
	EphemeralJobSucceeded EphemeralJobPhase = "Succeeded"
	// EphemeralJobFailed: the containers failed in at least one pod.
	EphemeralJobFailed EphemeralJobPhase = "Failed"
	// EphemeralJobWaiting: containers were added but none runs yet.
	EphemeralJobWaiting EphemeralJobPhase = "Waiting"
	// EphemeralJobRunning: containers run in at least one pod.
	EphemeralJobRunning EphemeralJobPhase = "Running"
	// EphemeralJobPause: the job is paused.
	EphemeralJobPause EphemeralJobPhase = "Paused"
	// EphemeralJobError: the job cannot proceed, for example because the pods reject ephemeral
	// containers.
	EphemeralJobError EphemeralJobPhase = "Error"
)

// EphemeralJobConditionType names a job condition.
type EphemeralJobConditionType string

const (
	// EphemeralJobSucceed is True when the job succeeded (OpenKruise's EJobSucceeded).
	EphemeralJobSucceed EphemeralJobConditionType = "JobSucceeded"
	// EphemeralJobFailure is True when the job failed.
	EphemeralJobFailure EphemeralJobConditionType = "JobFailed"
	// EphemeralJobConditionError is True when the job met an error it cannot recover from.
	EphemeralJobConditionError EphemeralJobConditionType = "JobError"
	// EphemeralJobInitialized is True once the controller has started the job.
	EphemeralJobInitialized EphemeralJobConditionType = "Initialized"
	// EphemeralJobMatchedEmpty is True while the selector matches no pod.
	EphemeralJobMatchedEmpty EphemeralJobConditionType = "MatchedEmpty"
)

// EphemeralContainerEnvKey names the env var, set to the job's UID, that marks each ephemeral
// container a job injected as the job's.
const EphemeralContainerEnvKey = "KRUISE_EJOB_ID"

// EphemeralJobStatus is the observed state of an EphemeralJob.
type EphemeralJobStatus struct {
	// Conditions are the job's conditions.
	// +optional
	Conditions []EphemeralJobCondition `json:"conditions,omitempty"`
	// StartTime is when the controller started the job.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the job finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Phase is where the job stands.
	// +optional
	Phase EphemeralJobPhase `json:"phase,omitempty"`
	// Matches is how many pods the selector matches.
	// +optional
	Matches int32 `json:"match,omitempty"`
	// Succeeded is how many pods ran the containers to success.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// Failed is how many pods had a container fail.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// Running is how many pods run the containers now.
	// +optional
	Running int32 `json:"running,omitempty"`
	// Waiting is how many pods have the containers added but not yet running.
	// +optional
	Waiting int32 `json:"waiting,omitempty"`
}

// EphemeralJobCondition is one condition of a job.
type EphemeralJobCondition struct {
	// Type is what the condition is about.
	Type EphemeralJobConditionType `json:"type"`
	// Status is True, False or Unknown.
	Status v1.ConditionStatus `json:"status"`
	// LastProbeTime is when the condition was last checked.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a machine-readable reason for the last change.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains the last change in human words.
	// +optional
	Message string `json:"message,omitempty"`
}

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ejob
// +kubebuilder:printcolumn:name="STATUS",type="string",JSONPath=".status.phase",description="Phase of the job."
// +kubebuilder:printcolumn:name="MATCH",type="integer",JSONPath=".status.match",description="Pods the selector matches."
// +kubebuilder:printcolumn:name="SUCCEED",type="integer",JSONPath=".status.succeeded",description="Pods where the containers succeeded."
// +kubebuilder:printcolumn:name="FAILED",type="integer",JSONPath=".status.failed",description="Pods where a container failed."
// +kubebuilder:printcolumn:name="RUNNING",type="integer",JSONPath=".status.running",description="Pods running the containers."
// +kubebuilder:printcolumn:name="WAITING",type="integer",JSONPath=".status.waiting",description="Pods where the containers wait to run."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."

// EphemeralJob adds ephemeral containers to a set of running pods, for example to debug them, and
// tracks how they ran.
type EphemeralJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired job.
	Spec EphemeralJobSpec `json:"spec,omitempty"`
	// Status is the observed progress.
	Status EphemeralJobStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// EphemeralJobList is a list of EphemeralJob.
type EphemeralJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the jobs.
	Items []EphemeralJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&EphemeralJob{}, &EphemeralJobList{})
}
