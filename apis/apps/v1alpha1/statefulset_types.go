package v1alpha1

import (
	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// StatefulSetPodUpdatePolicyType says how an Advanced StatefulSet replaces a pod's revision during
// a rolling update.
type StatefulSetPodUpdatePolicyType string

// Pod update policies of an Advanced StatefulSet rolling update. An empty policy means
// RecreateStatefulSetPodUpdatePolicy.
const (
	// RecreateStatefulSetPodUpdatePolicy deletes the old pod and creates it again at the new revision.
	RecreateStatefulSetPodUpdatePolicy StatefulSetPodUpdatePolicyType = "ReCreate"
	// InPlaceIfPossibleStatefulSetPodUpdatePolicy updates the pod in place when only fields that can
	// change in place differ, and recreates it otherwise.
	InPlaceIfPossibleStatefulSetPodUpdatePolicy StatefulSetPodUpdatePolicyType = "InPlaceIfPossible"
	// InPlaceOnlyStatefulSetPodUpdatePolicy only ever updates pods in place.
	InPlaceOnlyStatefulSetPodUpdatePolicy StatefulSetPodUpdatePolicyType = "InPlaceOnly"
)

// StatefulSetSpec is the desired state of an Advanced StatefulSet.
type StatefulSetSpec struct {
	// Replicas is the desired number of pods. Nil means 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Selector is a label query over the pods the StatefulSet owns; it must match the template's labels.
	Selector *metav1.LabelSelector `json:"selector"`

	// Template is the pod template; each pod gets a stable name and identity derived from its ordinal.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Template v1.PodTemplateSpec `json:"template"`

	// VolumeClaimTemplates are PVC templates; each pod gets its own claims, kept across pod restarts.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	VolumeClaimTemplates []v1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty"`

	// ServiceName is the headless Service that gives the pods their network identity.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`

	// PodManagementPolicy is OrderedReady (one pod at a time, in order; the default) or Parallel.
	// +optional
	PodManagementPolicy appsv1.PodManagementPolicyType `json:"podManagementPolicy,omitempty"`

	// UpdateStrategy tunes how pods are moved to a new revision.
	// +optional
	UpdateStrategy StatefulSetUpdateStrategy `json:"updateStrategy,omitempty"`

	// RevisionHistoryLimit is how many old ControllerRevisions are kept. Nil means 10.
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
}

// StatefulSetUpdateStrategy tunes how an Advanced StatefulSet moves pods to a new revision.
type StatefulSetUpdateStrategy struct {
	// Type is RollingUpdate (the default) or OnDelete.
	// +optional
	Type appsv1.StatefulSetUpdateStrategyType `json:"type,omitempty"`
	// RollingUpdate tunes the RollingUpdate type.
	// +optional
	RollingUpdate *StatefulSetRollingUpdateStrategy `json:"rollingUpdate,omitempty"`
}

// StatefulSetRollingUpdateStrategy tunes a rolling update of an Advanced StatefulSet.
type StatefulSetRollingUpdateStrategy struct {
	// Partition keeps the pods with an ordinal below it at the old revision. Nil means 0.
	// +optional
	Partition *int32 `json:"partition,omitempty"`
	// MaxUnavailable caps the pods that may be unavailable during the update; absolute number or
	// percentage of replicas. More than one takes effect only with the Parallel management policy.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// PodUpdatePolicy is how each pod is updated: ReCreate (the default), InPlaceIfPossible or
	// InPlaceOnly.
	// +optional
	PodUpdatePolicy StatefulSetPodUpdatePolicyType `json:"podUpdatePolicy,omitempty"`
	// Paused stops the update from touching further pods.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// UnorderedUpdate, when set, updates pods in priority order instead of by descending ordinal.
	// +optional
	UnorderedUpdate *StatefulSetUnorderedUpdateStrategy `json:"unorderedUpdate,omitempty"`
	// InPlaceUpdateStrategy tunes in-place updates.
	// +optional
	InPlaceUpdateStrategy *appspub.InPlaceUpdateStrategy `json:"inPlaceUpdateStrategy,omitempty"`
	// MinReadySeconds is how long an updated pod must be ready before the next pod is updated.
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
}

// StatefulSetUnorderedUpdateStrategy orders a rolling update by priority rather than by ordinal.
type StatefulSetUnorderedUpdateStrategy struct {
	// PriorityStrategy orders which pods are updated first.
	// +optional
	PriorityStrategy *appspub.UpdatePriorityStrategy `json:"priorityStrategy,omitempty"`
}

// StatefulSetStatus is the observed state of an Advanced StatefulSet.
type StatefulSetStatus struct {
	// ObservedGeneration is the StatefulSet generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas is the number of pods the StatefulSet owns.
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of owned pods that are ready.
	ReadyReplicas int32 `json:"readyReplicas"`

	// AvailableReplicas is the number of owned pods that have been ready for minReadySeconds.
	AvailableReplicas int32 `json:"availableReplicas"`

	// CurrentReplicas is the number of owned pods at the current revision.
	CurrentReplicas int32 `json:"currentReplicas"`

	// UpdatedReplicas is the number of owned pods at the update revision.
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// CurrentRevision is the name of the ControllerRevision of the pods below the partition.
	// +optional
	CurrentRevision string `json:"currentRevision,omitempty"`

	// UpdateRevision is the name of the ControllerRevision pods are being updated to.
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty"`

	// CollisionCount counts hash collisions of revision names; it is mixed into new names.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`

	// Conditions are the latest observations of the StatefulSet's state.
	// +optional
	Conditions []StatefulSetCondition `json:"conditions,omitempty"`

	// LabelSelector is the selector in string form, for the scale subresource.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// StatefulSetCondition is one observation of an Advanced StatefulSet's state.
type StatefulSetCondition struct {
	// Type is the kind of condition.
	Type appsv1.StatefulSetConditionType `json:"type"`
	// Status is True, False or Unknown.
	Status v1.ConditionStatus `json:"status"`
	// LastTransitionTime is when Status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a one-word CamelCase cause of the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable detail of the last transition.
	// +optional
	Message string `json:"message,omitempty"`
}

// StatefulSet (Advanced StatefulSet, v1alpha1) runs pods with stable identities and storage, like
// the built-in StatefulSet, and adds in-place update and parallel or unordered updates. v1beta1 is the
// storage version and has more fields.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.labelSelector
// +kubebuilder:resource:shortName=sts;asts,scope=Namespaced
// +kubebuilder:printcolumn:name="DESIRED",type="integer",JSONPath=".spec.replicas",description="The desired number of pods."
// +kubebuilder:printcolumn:name="CURRENT",type="integer",JSONPath=".status.replicas",description="The number of pods."
// +kubebuilder:printcolumn:name="UPDATED",type="integer",JSONPath=".status.updatedReplicas",description="The number of pods at the update revision."
// +kubebuilder:printcolumn:name="READY",type="integer",JSONPath=".status.readyReplicas",description="The number of ready pods."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."
// +kubebuilder:printcolumn:name="CONTAINERS",type="string",priority=1,JSONPath=".spec.template.spec.containers[*].name",description="Container names of the pod template."
// +kubebuilder:printcolumn:name="IMAGES",type="string",priority=1,JSONPath=".spec.template.spec.containers[*].image",description="Container images of the pod template."
type StatefulSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec StatefulSetSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status StatefulSetStatus `json:"status,omitempty"`
}

// StatefulSetList is a list of Advanced StatefulSets.
// +kubebuilder:object:root=true
type StatefulSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the StatefulSets.
	Items []StatefulSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&StatefulSet{}, &StatefulSetList{})
}
