package v1alpha1

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// WorkloadSpreadSpec says which workload to spread and over which subsets of nodes.
type WorkloadSpreadSpec struct {
	// TargetReference names the workload, in the same namespace, whose pods are spread.
	TargetReference *WorkloadSpreadTargetReference `json:"targetRef"`
	// TargetFilter narrows which of the workload's pods, and which replica count, the spread uses.
	// +optional
	TargetFilter *WorkloadSpreadTargetFilter `json:"targetFilter,omitempty"`
	// Subsets are the node groups pods are spread over, in order of preference.
	Subsets []WorkloadSpreadSubset `json:"subsets"`
	// ScheduleStrategy says what to do with pods that cannot be scheduled into their subset.
	// +optional
	ScheduleStrategy WorkloadSpreadScheduleStrategy `json:"scheduleStrategy,omitempty"`
}

// WorkloadSpreadTargetReference points at a workload in the same namespace.
type WorkloadSpreadTargetReference struct {
	// APIVersion is the group/version of the workload.
	APIVersion string `json:"apiVersion"`
	// Kind is the workload's kind.
	Kind string `json:"kind"`
	// Name is the workload's name.
	Name string `json:"name"`
}

// WorkloadSpreadTargetFilter narrows the pods and the replica count a spread works with.
type WorkloadSpreadTargetFilter struct {
	// Selector keeps only the workload's pods that match it.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// ReplicasPathList are paths in the workload object whose integer values are summed to give the
	// replica count percentages refer to.
	// +optional
	ReplicasPathList []string `json:"replicasPathList,omitempty"`
}

// WorkloadSpreadScheduleStrategyType names a schedule strategy.
// +kubebuilder:validation:Enum=Adaptive;Fixed;""
type WorkloadSpreadScheduleStrategyType string

const (
	// WorkloadSpreadFixedScheduleStrategy keeps pods in their subset even when they cannot schedule.
	WorkloadSpreadFixedScheduleStrategy WorkloadSpreadScheduleStrategyType = "Fixed"
	// WorkloadSpreadAdaptiveScheduleStrategy moves pods that cannot schedule to another subset.
	WorkloadSpreadAdaptiveScheduleStrategy WorkloadSpreadScheduleStrategyType = "Adaptive"
)

// WorkloadSpreadScheduleStrategy says what happens to pods that cannot be scheduled in their subset.
type WorkloadSpreadScheduleStrategy struct {
	// Type is Fixed or Adaptive; Fixed when empty.
	// +optional
	Type WorkloadSpreadScheduleStrategyType `json:"type,omitempty"`
	// Adaptive tunes the Adaptive strategy.
	// +optional
	Adaptive *WorkloadSpreadAdaptiveStrategy `json:"adaptive,omitempty"`
}

// WorkloadSpreadAdaptiveStrategy tunes the Adaptive schedule strategy.
type WorkloadSpreadAdaptiveStrategy struct {
	// DisableSimulationSchedule turns off the check, at pod creation, that a subset has room.
	// +optional
	DisableSimulationSchedule bool `json:"disableSimulationSchedule,omitempty"`
	// RescheduleCriticalSeconds is how long a pod may stay unschedulable before its subset is
	// marked unschedulable and the pod is moved elsewhere.
	// +optional
	RescheduleCriticalSeconds *int32 `json:"rescheduleCriticalSeconds,omitempty"`
}

// WorkloadSpreadSubset is one group of nodes pods are spread over.
type WorkloadSpreadSubset struct {
	// Name identifies the subset within the spread.
	Name string `json:"name"`
	// RequiredNodeSelectorTerm is the node constraint pods of this subset must satisfy.
	// +optional
	RequiredNodeSelectorTerm *v1.NodeSelectorTerm `json:"requiredNodeSelectorTerm,omitempty"`
	// PreferredNodeSelectorTerms are node preferences added to pods of this subset.
	// +optional
	PreferredNodeSelectorTerms []v1.PreferredSchedulingTerm `json:"preferredNodeSelectorTerms,omitempty"`
	// Tolerations are added to pods of this subset.
	// +optional
	Tolerations []v1.Toleration `json:"tolerations,omitempty"`
	// MaxReplicas is the number or percentage of pods this subset may hold; unlimited when unset.
	// +optional
	MaxReplicas *intstr.IntOrString `json:"maxReplicas,omitempty"`
	// Patch is a strategic merge patch applied to pods of this subset.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Patch runtime.RawExtension `json:"patch,omitempty"`
}

// WorkloadSpreadStatus is the observed state of a WorkloadSpread.
type WorkloadSpreadStatus struct {
	// ObservedGeneration is the spec generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// SubsetStatuses is the state of each subset for the workload's current revision.
	// +optional
	SubsetStatuses []WorkloadSpreadSubsetStatus `json:"subsetStatuses,omitempty"`
	// VersionedSubsetStatuses is the state of each subset per workload revision.
	// +optional
	VersionedSubsetStatuses map[string][]WorkloadSpreadSubsetStatus `json:"versionedSubsetStatuses,omitempty"`
	// Conditions: PlacementRegistered says whether the API server sends the creations of the pods it places to Kruise for the
	// current generation. Kruise only (not in OpenKruise).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WorkloadSpreadPlacementRegistered is the condition type that says whether the placement
// webhook entry of the spread's current generation is in place.
const WorkloadSpreadPlacementRegistered = "PlacementRegistered"

// WorkloadSpreadSubsetConditionType names a subset condition.
type WorkloadSpreadSubsetConditionType string

const (
	// WorkloadSpreadSubsetSchedulable is False while pods of the subset cannot be scheduled.
	WorkloadSpreadSubsetSchedulable WorkloadSpreadSubsetConditionType = "Schedulable"
)

// WorkloadSpreadSubsetStatus is the observed state of one subset.
type WorkloadSpreadSubsetStatus struct {
	// Name is the subset's name.
	Name string `json:"name"`
	// Replicas is how many pods the subset holds.
	Replicas int32 `json:"replicas"`
	// Conditions are the subset's conditions.
	// +optional
	Conditions []WorkloadSpreadSubsetCondition `json:"conditions,omitempty"`
	// MissingReplicas is how many more pods the subset may take; -1 means no limit.
	MissingReplicas int32 `json:"missingReplicas"`
	// CreatingPods maps names of pods admitted into the subset but not yet seen to their admission
	// time.
	// +optional
	CreatingPods map[string]metav1.Time `json:"creatingPods,omitempty"`
	// DeletingPods maps names of pods admitted for deletion from the subset to their admission time.
	// +optional
	DeletingPods map[string]metav1.Time `json:"deletingPods,omitempty"`
}

// WorkloadSpreadSubsetCondition is one condition of a subset.
type WorkloadSpreadSubsetCondition struct {
	// Type is what the condition is about.
	Type WorkloadSpreadSubsetConditionType `json:"type"`
	// Status is True, False or Unknown.
	Status v1.ConditionStatus `json:"status"`
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
// +kubebuilder:resource:shortName=ws
// +kubebuilder:printcolumn:name="WorkloadName",type="string",JSONPath=".spec.targetRef.name",description="Name of the spread workload."
// +kubebuilder:printcolumn:name="WorkloadKind",type="string",JSONPath=".spec.targetRef.kind",description="Kind of the spread workload."
// +kubebuilder:printcolumn:name="Adaptive",type="boolean",JSONPath=".spec.scheduleStrategy.type[?(@ == \"Adaptive\")]",description="Whether the Adaptive strategy is used."
// +kubebuilder:printcolumn:name="Registered",type="string",JSONPath=".status.conditions[?(@.type=='PlacementRegistered')].status",priority=1,description="Whether the creations of the pods it places are sent to Kruise."
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."

// WorkloadSpread spreads the pods of a workload over subsets of nodes, with a quota per subset.
type WorkloadSpread struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired spread.
	Spec WorkloadSpreadSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status WorkloadSpreadStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkloadSpreadList is a list of WorkloadSpread.
type WorkloadSpreadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the spreads.
	Items []WorkloadSpread `json:"items"`
}

func init() {
	SchemeBuilder.Register(&WorkloadSpread{}, &WorkloadSpreadList{})
}
