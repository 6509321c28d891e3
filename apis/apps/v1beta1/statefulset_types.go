package v1beta1

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

// StatefulSetVolumeClaimUpdateStrategyType says when changes of volumeClaimTemplates reach the PVCs.
type StatefulSetVolumeClaimUpdateStrategyType string

// Volume claim update strategy types.
const (
	// OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy applies template changes to a pod's
	// PVCs while that pod is updated.
	OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy StatefulSetVolumeClaimUpdateStrategyType = "OnPodRollingUpdate"
	// OnPVCDeleteStatefulSetVolumeClaimUpdateStrategy applies template changes only to PVCs created
	// after the old ones were deleted.
	OnPVCDeleteStatefulSetVolumeClaimUpdateStrategy StatefulSetVolumeClaimUpdateStrategyType = "OnPVCDelete"
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

	// ReserveOrdinals are ordinals the StatefulSet skips: no pod gets them, and replicas counts only
	// the others. Each item is an ordinal or a range written as a string "start-end".
	// +optional
	ReserveOrdinals []intstr.IntOrString `json:"reserveOrdinals,omitempty"`

	// Lifecycle holds the hooks that can hold pods in lifecycle states.
	// +optional
	Lifecycle *appspub.Lifecycle `json:"lifecycle,omitempty"`

	// ScaleStrategy tunes how pods are created and deleted when scaling.
	// +optional
	ScaleStrategy *StatefulSetScaleStrategy `json:"scaleStrategy,omitempty"`

	// PersistentVolumeClaimRetentionPolicy says whether PVCs from volumeClaimTemplates are kept or
	// deleted when the StatefulSet is deleted or scaled in.
	// +optional
	PersistentVolumeClaimRetentionPolicy *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy `json:"persistentVolumeClaimRetentionPolicy,omitempty"`

	// Ordinals sets the first ordinal the pods are numbered from.
	// +optional
	Ordinals *appsv1.StatefulSetOrdinals `json:"ordinals,omitempty"`

	// VolumeClaimUpdateStrategy says when changes of volumeClaimTemplates reach existing PVCs.
	// +optional
	VolumeClaimUpdateStrategy StatefulSetVolumeClaimUpdateStrategy `json:"volumeClaimUpdateStrategy,omitempty"`
}

// StatefulSetVolumeClaimUpdateStrategy says when changes of volumeClaimTemplates reach existing PVCs.
type StatefulSetVolumeClaimUpdateStrategy struct {
	// Type is OnPodRollingUpdate or OnPVCDelete.
	// +optional
	Type StatefulSetVolumeClaimUpdateStrategyType `json:"type,omitempty"`
}

// StatefulSetScaleStrategy tunes how an Advanced StatefulSet scales.
type StatefulSetScaleStrategy struct {
	// MaxUnavailable caps the unavailable pods while scaling with the Parallel policy: new pods are
	// not created while this many are unavailable. Absolute number or percentage of replicas.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
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

	// UpdatedReadyReplicas is the number of owned pods at the update revision that are ready.
	// +optional
	UpdatedReadyReplicas int32 `json:"updatedReadyReplicas,omitempty"`

	// UpdatedAvailableReplicas is the number of owned pods at the update revision that are available.
	// +optional
	UpdatedAvailableReplicas int32 `json:"updatedAvailableReplicas,omitempty"`

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

	// VolumeClaims reports, per volume claim template, how many pods use PVCs that match it.
	// +optional
	VolumeClaims []StatefulSetVolumeClaimStatus `json:"volumeClaims,omitempty"`
}

// StatefulSetVolumeClaimStatus counts the pods whose PVCs of one template match that template.
type StatefulSetVolumeClaimStatus struct {
	// VolumeClaimName is the name of the volume claim template.
	VolumeClaimName string `json:"volumeClaimName"`
	// CompatibleReplicas is the number of pods whose PVC of this template matches it.
	CompatibleReplicas int32 `json:"compatibleReplicas"`
	// CompatibleReadyReplicas is the number of ready pods whose PVC of this template matches it.
	CompatibleReadyReplicas int32 `json:"compatibleReadyReplicas"`
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

// StatefulSet (Advanced StatefulSet) runs pods with stable identities and storage, like the
// built-in StatefulSet, and adds in-place update, parallel and unordered updates, reserved ordinals,
// lifecycle hooks and PVC resizing.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
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
