package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// BroadcastJobSpec is what the user asks of a BroadcastJob: run one pod from Template on every
// eligible node until it completes.
type BroadcastJobSpec struct {
	// Parallelism caps how many of the job's pods may run at once, as a count or a percentage of
	// the desired pods; unset means no cap.
	// +optional
	Parallelism *intstr.IntOrString `json:"parallelism,omitempty"`

	// Template is the pod created on each node the job runs on.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Template corev1.PodTemplateSpec `json:"template"`

	// CompletionPolicy says when the job counts as finished (Always when unset).
	// +optional
	CompletionPolicy BroadcastJobCompletionPolicy `json:"completionPolicy,omitempty"`

	// Paused stops the job from creating further pods while true.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// FailurePolicy says how the job reacts to failed pods.
	// +optional
	FailurePolicy BroadcastJobFailurePolicy `json:"failurePolicy,omitempty"`
}

// BroadcastJobCompletionPolicyType names a completion policy of a BroadcastJob.
type BroadcastJobCompletionPolicyType string

const (
	// BroadcastJobCompletionPolicyAlways finishes the job once every desired pod has finished (or its
	// deadline has passed).
	BroadcastJobCompletionPolicyAlways BroadcastJobCompletionPolicyType = "Always"
	// BroadcastJobCompletionPolicyNever keeps the job running forever, so new nodes get a pod too.
	BroadcastJobCompletionPolicyNever BroadcastJobCompletionPolicyType = "Never"
)

// BroadcastJobCompletionPolicy says when a BroadcastJob finishes and how long it is kept afterwards.
type BroadcastJobCompletionPolicy struct {
	// Type is Always or Never; Always when unset.
	// +optional
	Type BroadcastJobCompletionPolicyType `json:"type,omitempty"`

	// ActiveDeadlineSeconds is how long after its start the job may stay active before it is
	// stopped and marked failed; only for type Always.
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// TTLSecondsAfterFinished is how long a finished job is kept before it is deleted; unset keeps it
	// forever. Only for type Always.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// BroadcastJobFailurePolicyType names a failure policy of a BroadcastJob.
type BroadcastJobFailurePolicyType string

const (
	// BroadcastJobFailurePolicyTypeContinue keeps the job going when a pod fails.
	BroadcastJobFailurePolicyTypeContinue BroadcastJobFailurePolicyType = "Continue"
	// BroadcastJobFailurePolicyTypeFailFast marks the job failed as soon as a pod fails (the default).
	BroadcastJobFailurePolicyTypeFailFast BroadcastJobFailurePolicyType = "FailFast"
	// BroadcastJobFailurePolicyTypePause pauses the job when a pod fails.
	BroadcastJobFailurePolicyTypePause BroadcastJobFailurePolicyType = "Pause"
)

// BroadcastJobFailurePolicy says how a BroadcastJob reacts to failed pods.
type BroadcastJobFailurePolicy struct {
	// Type is Continue, FailFast or Pause; FailFast when unset.
	// +optional
	Type BroadcastJobFailurePolicyType `json:"type,omitempty"`

	// RestartLimit is how many times a pod may be retried before it counts as failed.
	// +optional
	RestartLimit int32 `json:"restartLimit,omitempty"`
}

// BroadcastJobPhase is the overall state of a BroadcastJob.
type BroadcastJobPhase string

const (
	// BroadcastJobPhaseRunning: pods are being created or are running.
	BroadcastJobPhaseRunning BroadcastJobPhase = "running"
	// BroadcastJobPhasePaused: the job is paused.
	BroadcastJobPhasePaused BroadcastJobPhase = "paused"
	// BroadcastJobPhaseCompleted: the job finished successfully.
	BroadcastJobPhaseCompleted BroadcastJobPhase = "completed"
	// BroadcastJobPhaseFailed: the job failed.
	BroadcastJobPhaseFailed BroadcastJobPhase = "failed"
)

// BroadcastJobStatus is the observed state of a BroadcastJob.
type BroadcastJobStatus struct {
	// Conditions are the latest observations of the job's state.
	// +optional
	Conditions []BroadcastJobCondition `json:"conditions,omitempty"`

	// StartTime is when the controller first acted on the job.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the job finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Active counts the job's pods that are running now.
	// +optional
	Active int32 `json:"active,omitempty"`

	// Succeeded counts the job's pods that ended in phase Succeeded.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// Failed counts the job's pods that ended in phase Failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// Desired is how many pods the job should run, usually the number of eligible nodes.
	// +optional
	Desired int32 `json:"desired,omitempty"`

	// Phase is the job's overall state.
	// +optional
	Phase BroadcastJobPhase `json:"phase,omitempty"`
}

// BroadcastJobConditionType names a condition of a BroadcastJob.
type BroadcastJobConditionType string

const (
	// BroadcastJobComplete: the job finished successfully.
	BroadcastJobComplete BroadcastJobConditionType = "Complete"
	// BroadcastJobFailed: the job failed.
	BroadcastJobFailed BroadcastJobConditionType = "Failed"
)

// BroadcastJobCondition is one observation of a BroadcastJob's state.
type BroadcastJobCondition struct {
	// Type is the kind of condition, Complete or Failed.
	Type BroadcastJobConditionType `json:"type"`
	// Status is True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// LastProbeTime is when the condition was last checked.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// LastTransitionTime is when Status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a machine-readable cause of the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains the last transition to humans.
	// +optional
	Message string `json:"message,omitempty"`
}

// BroadcastJob runs a pod to completion on every node that matches its template's scheduling
// constraints.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=bcj,scope=Namespaced
// +kubebuilder:printcolumn:name="Desired",type="integer",JSONPath=".status.desired",description="How many pods the job should run, usually the number of eligible nodes."
// +kubebuilder:printcolumn:name="Active",type="integer",JSONPath=".status.active",description="Pods running now."
// +kubebuilder:printcolumn:name="Succeeded",type="integer",JSONPath=".status.succeeded",description="Pods that ended in phase Succeeded."
// +kubebuilder:printcolumn:name="Failed",type="integer",JSONPath=".status.failed",description="Pods that ended in phase Failed."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the object was created."
type BroadcastJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired behaviour of the job.
	Spec BroadcastJobSpec `json:"spec,omitempty"`
	// Status is the observed state of the job.
	Status BroadcastJobStatus `json:"status,omitempty"`
}

// BroadcastJobList is a list of BroadcastJobs.
// +kubebuilder:object:root=true
type BroadcastJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the BroadcastJobs.
	Items []BroadcastJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BroadcastJob{}, &BroadcastJobList{})
}
