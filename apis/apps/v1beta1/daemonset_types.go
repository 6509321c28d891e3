package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// DaemonSetUpdateStrategyType names how an Advanced DaemonSet replaces its pods.
type DaemonSetUpdateStrategyType string

const (
	// DaemonSetRollingUpdateStrategyType replaces old pods automatically, within the rolling update limits.
	DaemonSetRollingUpdateStrategyType DaemonSetUpdateStrategyType = "RollingUpdate"
	// DaemonSetOnDeleteStrategyType replaces an old pod only after someone deletes it.
	DaemonSetOnDeleteStrategyType DaemonSetUpdateStrategyType = "OnDelete"
)

// DaemonSetRollingUpdateType names how a rolling update replaces each pod.
type DaemonSetRollingUpdateType string

const (
	// DaemonSetStandardRollingUpdateType deletes the old pod and creates a new one (the default).
	DaemonSetStandardRollingUpdateType DaemonSetRollingUpdateType = "Standard"
	// DaemonSetInplaceRollingUpdateType updates the pod in place when only in-place-updatable fields
	// changed, and recreates it otherwise.
	DaemonSetInplaceRollingUpdateType DaemonSetRollingUpdateType = "InPlaceIfPossible"
)

// DaemonSetUpdateStrategy says how an Advanced DaemonSet replaces pods that run an old revision.
type DaemonSetUpdateStrategy struct {
	// Type is RollingUpdate or OnDelete; RollingUpdate when unset.
	// +optional
	Type DaemonSetUpdateStrategyType `json:"type,omitempty"`

	// RollingUpdate tunes the rolling update; only meaningful when Type is RollingUpdate.
	// +optional
	RollingUpdate *DaemonSetRollingUpdate `json:"rollingUpdate,omitempty"`
}

// DaemonSetRollingUpdate tunes the rolling update of an Advanced DaemonSet.
type DaemonSetRollingUpdate struct {
	// Type is Standard or InPlaceIfPossible; Standard when unset.
	// +optional
	Type DaemonSetRollingUpdateType `json:"rollingUpdateType,omitempty"`

	// MaxUnavailable caps how many daemon pods may be unavailable during the update, as a count or a
	// percentage of the desired pods (rounded up); 1 when unset. It cannot be 0 while MaxSurge is 0.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MaxSurge caps how many nodes may run an updated pod beside their still-available old pod, as a
	// count or a percentage of the desired pods (rounded up); 0 when unset.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// Partition is how many daemon pods, as a count or a percentage, are kept at the old revision;
	// 0 when unset.
	// +optional
	Partition *intstr.IntOrString `json:"partition,omitempty"`

	// Paused stops the rolling update while true.
	// +optional
	Paused *bool `json:"paused,omitempty"`

	// Selector limits the update to the pods on nodes whose labels match.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// DaemonSetScaleStrategy tunes how an Advanced DaemonSet creates pods on nodes that need one.
type DaemonSetScaleStrategy struct {
	// PartitionedScaling makes the rolling update partition also limit the creation of new daemon
	// pods, so that only part of the nodes get one; false creates a pod on every node that needs one.
	// +optional
	PartitionedScaling bool `json:"partitionedScaling,omitempty"`
}

// DaemonSetSpec is what the user asks of an Advanced DaemonSet.
type DaemonSetSpec struct {
	// Selector matches the pods the daemon set owns; it must match the template's labels.
	Selector *metav1.LabelSelector `json:"selector"`

	// Template is the pod run on each eligible node.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Template corev1.PodTemplateSpec `json:"template"`

	// ScaleStrategy tunes how pods are created on nodes that need one.
	// +optional
	ScaleStrategy *DaemonSetScaleStrategy `json:"scaleStrategy,omitempty"`

	// UpdateStrategy says how pods of an old revision are replaced.
	// +optional
	UpdateStrategy DaemonSetUpdateStrategy `json:"updateStrategy,omitempty"`

	// MinReadySeconds is how long a new pod must be ready, without a container crashing, before it
	// counts as available; 0 when unset.
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// BurstReplicas caps how many pods are created in one round, as a count or a percentage;
	// 250 when unset.
	// +optional
	BurstReplicas *intstr.IntOrString `json:"burstReplicas,omitempty"`

	// RevisionHistoryLimit is how many old revisions are kept for rollback; 10 when unset.
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// Lifecycle holds the hooks that hold pods before deletion and around in-place updates.
	// +optional
	Lifecycle *appspub.Lifecycle `json:"lifecycle,omitempty"`
}

// DaemonSetStatus is the observed state of an Advanced DaemonSet.
type DaemonSetStatus struct {
	// CurrentNumberScheduled counts the nodes that run at least one daemon pod and should.
	CurrentNumberScheduled int32 `json:"currentNumberScheduled"`

	// NumberMisscheduled counts the nodes that run a daemon pod but should not.
	NumberMisscheduled int32 `json:"numberMisscheduled"`

	// DesiredNumberScheduled counts the nodes that should run a daemon pod.
	DesiredNumberScheduled int32 `json:"desiredNumberScheduled"`

	// NumberReady counts the nodes whose daemon pod is ready.
	NumberReady int32 `json:"numberReady"`

	// ObservedGeneration is the generation of the spec the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// UpdatedNumberScheduled counts the nodes that run a pod of the update revision.
	UpdatedNumberScheduled int32 `json:"updatedNumberScheduled"`

	// NumberAvailable counts the nodes whose daemon pod has been ready for MinReadySeconds.
	// +optional
	NumberAvailable int32 `json:"numberAvailable,omitempty"`

	// NumberUnavailable counts the nodes that should run an available daemon pod but do not.
	// +optional
	NumberUnavailable int32 `json:"numberUnavailable,omitempty"`

	// CollisionCount counts hash collisions of the revision names; the controller adds it to the
	// hash to find a free name.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`

	// Conditions are the latest observations of the daemon set's state.
	// +optional
	Conditions []DaemonSetCondition `json:"conditions,omitempty"`

	// UpdateRevision is the revision name (hash) of the current template.
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty"`
}

// DaemonSetConditionType names a condition of an Advanced DaemonSet.
type DaemonSetConditionType string

// DaemonSetCondition is one observation of an Advanced DaemonSet's state.
type DaemonSetCondition struct {
	// Type is the kind of condition.
	Type DaemonSetConditionType `json:"type"`
	// Status is True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
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

// DaemonSet (Advanced DaemonSet) runs one pod on every eligible node, with in-place updates,
// partitioned and node-selective rolling updates, and lifecycle hooks.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName={daemon,ads},scope=Namespaced
// +kubebuilder:printcolumn:name="DESIRED",type="integer",JSONPath=".status.desiredNumberScheduled",description="Nodes that should run a daemon pod."
// +kubebuilder:printcolumn:name="CURRENT",type="integer",JSONPath=".status.currentNumberScheduled",description="Nodes that run a daemon pod and should."
// +kubebuilder:printcolumn:name="READY",type="integer",JSONPath=".status.numberReady",description="Nodes whose daemon pod is ready."
// +kubebuilder:printcolumn:name="UP-TO-DATE",type="integer",JSONPath=".status.updatedNumberScheduled",description="Nodes that run a pod of the update revision."
// +kubebuilder:printcolumn:name="AVAILABLE",type="integer",JSONPath=".status.numberAvailable",description="Nodes whose daemon pod is available."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the object was created."
// +kubebuilder:printcolumn:name="CONTAINERS",type="string",priority=1,JSONPath=".spec.template.spec.containers[*].name",description="Container names of the template."
// +kubebuilder:printcolumn:name="IMAGES",type="string",priority=1,JSONPath=".spec.template.spec.containers[*].image",description="Container images of the template."
type DaemonSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired behaviour of the daemon set.
	Spec DaemonSetSpec `json:"spec,omitempty"`
	// Status is the observed state of the daemon set.
	Status DaemonSetStatus `json:"status,omitempty"`
}

// DaemonSetList is a list of Advanced DaemonSets.
// +kubebuilder:object:root=true
type DaemonSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the DaemonSets.
	Items []DaemonSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&DaemonSet{}, &DaemonSetList{})
}
