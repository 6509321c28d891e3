package v1alpha1

import (
	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// CloneSetSpec is the desired state of a CloneSet.
type CloneSetSpec struct {
	// Replicas is the desired number of pods. Nil means 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Selector is a label query over the pods the CloneSet owns; it must match the template's labels.
	Selector *metav1.LabelSelector `json:"selector"`

	// Template is the pod template of the pods the CloneSet creates.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Template v1.PodTemplateSpec `json:"template"`

	// VolumeClaimTemplates are PVC templates; each pod gets its own claims from them, which are
	// removed together with the pod.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	VolumeClaimTemplates []v1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty"`

	// ScaleStrategy tunes how pods are created and deleted when scaling.
	// +optional
	ScaleStrategy CloneSetScaleStrategy `json:"scaleStrategy,omitempty"`

	// UpdateStrategy tunes how pods are moved to a new revision.
	// +optional
	UpdateStrategy CloneSetUpdateStrategy `json:"updateStrategy,omitempty"`

	// RevisionHistoryLimit is how many old ControllerRevisions are kept. Nil means 10.
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// MinReadySeconds is how long a new pod must be ready, with no container crashing, before it
	// counts as available. Zero means as soon as it is ready.
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// Lifecycle holds the hooks that can hold pods in lifecycle states.
	// +optional
	Lifecycle *appspub.Lifecycle `json:"lifecycle,omitempty"`

	// ProgressDeadlineSeconds is the longest time, in seconds, a rollout may go without progress
	// before the CloneSet reports it as stalled.
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
}

// CloneSetScaleStrategy tunes how a CloneSet creates and deletes pods when scaling.
type CloneSetScaleStrategy struct {
	// PodsToDelete names pods the CloneSet must delete. When replicas is lowered at the same time
	// they are deleted instead of others; otherwise they are replaced.
	// +optional
	PodsToDelete []string `json:"podsToDelete,omitempty"`

	// MaxUnavailable caps the unavailable pods while scaling out: new pods are not created while this
	// many are unavailable. Absolute number or percentage of replicas.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// DisablePVCReuse makes the CloneSet delete the PVCs left over by a deleted pod instead of
	// attaching them to the pod that replaces it.
	// +optional
	DisablePVCReuse bool `json:"disablePVCReuse,omitempty"`
}

// CloneSetUpdateStrategy tunes how a CloneSet moves pods to a new revision.
type CloneSetUpdateStrategy struct {
	// Type is how each pod is updated: ReCreate (the default), InPlaceIfPossible or InPlaceOnly.
	// +optional
	Type CloneSetUpdateStrategyType `json:"type,omitempty"`

	// Partition is the number or percentage of pods kept at the old revision. Nil means 0 (update all).
	// +optional
	Partition *intstr.IntOrString `json:"partition,omitempty"`

	// MaxUnavailable caps the pods that may be unavailable during the update. Absolute number or
	// percentage of replicas.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MaxSurge is how many pods above replicas may be created during the update. Absolute number or
	// percentage of replicas.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// Paused stops the update from touching further pods; scaling continues.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// PriorityStrategy orders which pods are updated first.
	// +optional
	PriorityStrategy *appspub.UpdatePriorityStrategy `json:"priorityStrategy,omitempty"`

	// ScatterStrategy spreads pods with the given labels over the update order.
	// +optional
	ScatterStrategy UpdateScatterStrategy `json:"scatterStrategy,omitempty"`

	// InPlaceUpdateStrategy tunes in-place updates.
	// +optional
	InPlaceUpdateStrategy *appspub.InPlaceUpdateStrategy `json:"inPlaceUpdateStrategy,omitempty"`
}

// CloneSetStatus is the observed state of a CloneSet.
type CloneSetStatus struct {
	// ObservedGeneration is the CloneSet generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas is the number of pods the CloneSet owns.
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of owned pods that are ready.
	ReadyReplicas int32 `json:"readyReplicas"`

	// AvailableReplicas is the number of owned pods that have been ready for minReadySeconds.
	AvailableReplicas int32 `json:"availableReplicas"`

	// UpdatedReplicas is the number of owned pods at the update revision.
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// UpdatedReadyReplicas is the number of owned pods at the update revision that are ready.
	UpdatedReadyReplicas int32 `json:"updatedReadyReplicas"`

	// UpdatedAvailableReplicas is the number of owned pods at the update revision that are available.
	// +optional
	UpdatedAvailableReplicas int32 `json:"updatedAvailableReplicas,omitempty"`

	// ExpectedUpdatedReplicas is how many pods should be at the update revision once the update
	// reaches the partition.
	// +optional
	ExpectedUpdatedReplicas int32 `json:"expectedUpdatedReplicas,omitempty"`

	// UpdateRevision is the name of the ControllerRevision pods are being updated to.
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty"`

	// CurrentRevision is the name of the ControllerRevision all pods were at before the update.
	// +optional
	CurrentRevision string `json:"currentRevision,omitempty"`

	// CollisionCount counts hash collisions of revision names; it is mixed into new names.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`

	// Conditions are the latest observations of the CloneSet's state.
	// +optional
	Conditions []CloneSetCondition `json:"conditions,omitempty"`

	// LabelSelector is the selector in string form, for the scale subresource.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// CloneSetCondition is one observation of a CloneSet's state.
type CloneSetCondition struct {
	// Type is the kind of condition.
	Type CloneSetConditionType `json:"type"`
	// Status is True, False or Unknown.
	Status v1.ConditionStatus `json:"status"`
	// LastTransitionTime is when Status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// LastUpdateTime is when the condition was last written.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
	// Reason is a one-word CamelCase cause of the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable detail of the last transition.
	// +optional
	Message string `json:"message,omitempty"`
}

// CloneSet runs a set of interchangeable pods, like a Deployment, but manages the pods directly:
// it can update them in place, delete chosen pods, keep per-pod PVCs and hold pods in lifecycle hooks.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.labelSelector
// +kubebuilder:resource:shortName=clone,scope=Namespaced
// +kubebuilder:printcolumn:name="DESIRED",type="integer",JSONPath=".spec.replicas",description="The desired number of pods."
// +kubebuilder:printcolumn:name="UPDATED",type="integer",JSONPath=".status.updatedReplicas",description="The number of pods at the update revision."
// +kubebuilder:printcolumn:name="UPDATED_READY",type="integer",JSONPath=".status.updatedReadyReplicas",description="The number of ready pods at the update revision."
// +kubebuilder:printcolumn:name="UPDATED_AVAILABLE",type="integer",JSONPath=".status.updatedAvailableReplicas",description="The number of available pods at the update revision."
// +kubebuilder:printcolumn:name="READY",type="integer",JSONPath=".status.readyReplicas",description="The number of ready pods."
// +kubebuilder:printcolumn:name="TOTAL",type="integer",JSONPath=".status.replicas",description="The number of pods."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."
// +kubebuilder:printcolumn:name="CONTAINERS",type="string",priority=1,JSONPath=".spec.template.spec.containers[*].name",description="Container names of the pod template."
// +kubebuilder:printcolumn:name="IMAGES",type="string",priority=1,JSONPath=".spec.template.spec.containers[*].image",description="Container images of the pod template."
// +kubebuilder:printcolumn:name="SELECTOR",type="string",priority=1,JSONPath=".status.labelSelector",description="The label selector of the pods."
type CloneSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec CloneSetSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status CloneSetStatus `json:"status,omitempty"`
}

// CloneSetList is a list of CloneSets.
// +kubebuilder:object:root=true
type CloneSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the CloneSets.
	Items []CloneSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&CloneSet{}, &CloneSetList{})
}

// UpdateScatterStrategy spreads the pods that match its terms evenly over the order of a rolling
// update, instead of updating them next to each other.
type UpdateScatterStrategy []UpdateScatterTerm

// UpdateScatterTerm selects pods by one label key and value for scattering during an update.
type UpdateScatterTerm struct {
	// Key is the pod label key to match.
	Key string `json:"key"`
	// Value is the pod label value to match.
	Value string `json:"value"`
}
