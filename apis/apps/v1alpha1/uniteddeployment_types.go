package v1alpha1

import (
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// UnitedDeploymentUpdateStrategyType says how a UnitedDeployment rolls a new revision out to its
// subsets.
type UnitedDeploymentUpdateStrategyType string

// UnitedDeployment update strategy types.
const (
	// ManualUnitedDeploymentUpdateStrategyType, the default, updates each subset's workload up to the
	// partition given for it in manualUpdate.
	ManualUnitedDeploymentUpdateStrategyType UnitedDeploymentUpdateStrategyType = "Manual"
)

// UnitedDeploymentScheduleStrategyType says how a UnitedDeployment places replicas in its subsets.
type UnitedDeploymentScheduleStrategyType string

// UnitedDeployment schedule strategy types. An empty type means Fixed.
const (
	// FixedUnitedDeploymentScheduleStrategyType places replicas only as the subsets' replica settings
	// say, whether or not the pods can be scheduled.
	FixedUnitedDeploymentScheduleStrategyType UnitedDeploymentScheduleStrategyType = "Fixed"
	// AdaptiveUnitedDeploymentScheduleStrategyType moves replicas that cannot be scheduled in their
	// subset to subsets with spare capacity.
	AdaptiveUnitedDeploymentScheduleStrategyType UnitedDeploymentScheduleStrategyType = "Adaptive"
)

// UnitedDeploymentConditionType names a kind of UnitedDeployment status condition.
type UnitedDeploymentConditionType string

// UnitedDeploymentSubsetConditionType names a kind of condition of one subset.
type UnitedDeploymentSubsetConditionType string

// UnitedDeploymentSpec is the desired state of a UnitedDeployment.
type UnitedDeploymentSpec struct {
	// Replicas is the total desired number of pods over all subsets. Nil means 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Selector is a label query over the pods of all subsets; it must match the template's labels.
	Selector *metav1.LabelSelector `json:"selector"`

	// Template is the workload each subset runs; exactly one kind of template is set.
	// +optional
	Template UnitedDeploymentSubsetTemplate `json:"template,omitempty"`

	// Topology lists the subsets and how replicas are spread over them.
	// +optional
	Topology UnitedDeploymentTopology `json:"topology,omitempty"`

	// UpdateStrategy tunes how a new revision reaches the subsets.
	// +optional
	UpdateStrategy UnitedDeploymentUpdateStrategy `json:"updateStrategy,omitempty"`

	// RevisionHistoryLimit is how many old ControllerRevisions are kept. Nil means 10.
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
}

// UnitedDeploymentSubsetTemplate holds the workload template of the subsets; set exactly one field.
type UnitedDeploymentSubsetTemplate struct {
	// StatefulSetTemplate makes each subset a built-in apps/v1 StatefulSet.
	// +optional
	StatefulSetTemplate *UnitedDeploymentStatefulSetTemplate `json:"statefulSetTemplate,omitempty"`

	// AdvancedStatefulSetTemplate makes each subset an Advanced StatefulSet.
	// +optional
	AdvancedStatefulSetTemplate *UnitedDeploymentAdvancedStatefulSetTemplate `json:"advancedStatefulSetTemplate,omitempty"`

	// CloneSetTemplate makes each subset a CloneSet.
	// +optional
	CloneSetTemplate *UnitedDeploymentCloneSetTemplate `json:"cloneSetTemplate,omitempty"`

	// DeploymentTemplate makes each subset a built-in apps/v1 Deployment.
	// +optional
	DeploymentTemplate *UnitedDeploymentDeploymentTemplate `json:"deploymentTemplate,omitempty"`
}

// UnitedDeploymentStatefulSetTemplate is the template of subsets run as built-in StatefulSets.
type UnitedDeploymentStatefulSetTemplate struct {
	// ObjectMeta holds the labels and annotations of each subset's workload.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the StatefulSet spec; replicas and node placement are set per subset.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec appsv1.StatefulSetSpec `json:"spec"`
}

// UnitedDeploymentAdvancedStatefulSetTemplate is the template of subsets run as Advanced
// StatefulSets.
type UnitedDeploymentAdvancedStatefulSetTemplate struct {
	// ObjectMeta holds the labels and annotations of each subset's workload.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the Advanced StatefulSet spec; replicas and node placement are set per subset.
	Spec appsv1beta1.StatefulSetSpec `json:"spec"`
}

// UnitedDeploymentCloneSetTemplate is the template of subsets run as CloneSets.
type UnitedDeploymentCloneSetTemplate struct {
	// ObjectMeta holds the labels and annotations of each subset's workload.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the CloneSet spec; replicas and node placement are set per subset.
	Spec CloneSetSpec `json:"spec"`
}

// UnitedDeploymentDeploymentTemplate is the template of subsets run as built-in Deployments.
type UnitedDeploymentDeploymentTemplate struct {
	// ObjectMeta holds the labels and annotations of each subset's workload.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the Deployment spec; replicas and node placement are set per subset.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec appsv1.DeploymentSpec `json:"spec"`
}

// UnitedDeploymentUpdateStrategy tunes how a new revision reaches the subsets.
type UnitedDeploymentUpdateStrategy struct {
	// Type is the update strategy; Manual is the default and the only one.
	// +optional
	Type UnitedDeploymentUpdateStrategyType `json:"type,omitempty"`
	// ManualUpdate holds the settings of the Manual type.
	// +optional
	ManualUpdate *UnitedDeploymentManualUpdate `json:"manualUpdate,omitempty"`
}

// UnitedDeploymentManualUpdate holds per-subset partitions of a Manual update.
type UnitedDeploymentManualUpdate struct {
	// Partitions maps a subset name to the partition of its workload: how many of its pods stay at
	// the old revision. Subsets not listed get 0.
	// +optional
	Partitions map[string]int32 `json:"partitions,omitempty"`
}

// UnitedDeploymentTopology lists the subsets and how replicas are spread over them.
type UnitedDeploymentTopology struct {
	// Subsets are the groups of nodes, each run by its own workload; order matters for minReplicas
	// and for the Adaptive strategy.
	// +optional
	Subsets []UnitedDeploymentSubset `json:"subsets,omitempty"`

	// ScheduleStrategy says how replicas are placed in subsets.
	// +optional
	ScheduleStrategy UnitedDeploymentScheduleStrategy `json:"scheduleStrategy,omitempty"`
}

// UnitedDeploymentSubset is one group of nodes with its own workload.
type UnitedDeploymentSubset struct {
	// Name is the subset's DNS-label name, unique in the UnitedDeployment; it prefixes the name of
	// the subset's workload.
	Name string `json:"name"`

	// NodeSelectorTerm selects the nodes of the subset; it cannot change once set.
	// +optional
	NodeSelectorTerm v1.NodeSelectorTerm `json:"nodeSelectorTerm,omitempty"`

	// Tolerations are added to the subset's pods; they cannot change once set.
	// +optional
	Tolerations []v1.Toleration `json:"tolerations,omitempty"`

	// Replicas is the subset's number of pods, or a percentage of the UnitedDeployment's replicas.
	// Nil lets the controller share the remaining replicas evenly among such subsets.
	// +optional
	Replicas *intstr.IntOrString `json:"replicas,omitempty"`

	// MinReplicas is the least number (or percentage) of pods the subset gets; filled first, in
	// subset order. Nil means 0.
	// +optional
	MinReplicas *intstr.IntOrString `json:"minReplicas,omitempty"`

	// MaxReplicas is the most pods (number or percentage) the subset gets; nil means no limit.
	// +optional
	MaxReplicas *intstr.IntOrString `json:"maxReplicas,omitempty"`

	// Patch is a strategic-merge patch applied to the subset's workload template; it wins over the
	// other subset fields.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Patch runtime.RawExtension `json:"patch,omitempty"`
}

// UnitedDeploymentScheduleStrategy says how replicas are placed in subsets.
type UnitedDeploymentScheduleStrategy struct {
	// Type is Fixed (the default) or Adaptive.
	// +kubebuilder:validation:Enum=Adaptive;Fixed;""
	// +optional
	Type UnitedDeploymentScheduleStrategyType `json:"type,omitempty"`

	// Adaptive tunes the Adaptive type.
	// +optional
	Adaptive *UnitedDeploymentAdaptiveStrategy `json:"adaptive,omitempty"`
}

// UnitedDeploymentAdaptiveStrategy tunes how the Adaptive schedule strategy moves pods that cannot
// be scheduled.
type UnitedDeploymentAdaptiveStrategy struct {
	// RescheduleCriticalSeconds is how long a pod may stay unschedulable before it is moved to
	// another subset. Nil means 30.
	// +optional
	RescheduleCriticalSeconds *int32 `json:"rescheduleCriticalSeconds,omitempty"`

	// UnschedulableDuration is how many seconds a subset counts as unschedulable after a pod failed
	// to schedule in it. Nil means 300.
	// +optional
	UnschedulableDuration *int32 `json:"unschedulableDuration,omitempty"`

	// ReserveUnschedulablePods keeps pending pods in their subset and runs temporary stand-ins in
	// other subsets until they are scheduled, instead of moving them for good.
	// +optional
	ReserveUnschedulablePods bool `json:"reserveUnschedulablePods,omitempty"`
}

// UnitedDeploymentStatus is the observed state of a UnitedDeployment.
type UnitedDeploymentStatus struct {
	// ObservedGeneration is the UnitedDeployment generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ReadyReplicas is the number of ready pods over all subsets.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Replicas is the number of pods over all subsets.
	Replicas int32 `json:"replicas"`

	// UpdatedReplicas is the number of pods at the current revision.
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// UpdatedReadyReplicas is the number of ready pods at the current revision.
	// +optional
	UpdatedReadyReplicas int32 `json:"updatedReadyReplicas,omitempty"`

	// ReservedPods is the number of pods kept by the Adaptive strategy while stand-ins run.
	// +optional
	ReservedPods int32 `json:"reservedPods,omitempty"`

	// CurrentRevision is the name of the UnitedDeployment's current ControllerRevision.
	CurrentRevision string `json:"currentRevision"`

	// CollisionCount counts hash collisions of revision names; it is mixed into new names.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`

	// SubsetReplicas maps each subset name to the replicas assigned to it.
	// +optional
	SubsetReplicas map[string]int32 `json:"subsetReplicas,omitempty"`

	// SubsetStatuses reports per-subset state.
	// +optional
	SubsetStatuses []UnitedDeploymentSubsetStatus `json:"subsetStatuses,omitempty"`

	// Conditions are the latest observations of the UnitedDeployment's state.
	// +optional
	Conditions []UnitedDeploymentCondition `json:"conditions,omitempty"`

	// UpdateStatus reports the progress of the update.
	// +optional
	UpdateStatus *UnitedDeploymentUpdateStatus `json:"updateStatus,omitempty"`

	// LabelSelector is the selector in string form, for the scale subresource.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// UnitedDeploymentSubsetStatus is the observed state of one subset.
type UnitedDeploymentSubsetStatus struct {
	// Name is the subset's name from topology.subsets.
	// +optional
	Name string `json:"name,omitempty"`
	// Replicas is the subset's number of pods.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas is the subset's number of ready pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Partition is the subset workload's current partition.
	// +optional
	Partition int32 `json:"partition,omitempty"`
	// ReservedPods is the number of the subset's pods kept by the Adaptive strategy.
	// +optional
	ReservedPods int32 `json:"reservedPods,omitempty"`
	// Conditions are the latest observations of the subset's state.
	// +optional
	Conditions []UnitedDeploymentSubsetCondition `json:"conditions,omitempty"`
}

// UnitedDeploymentSubsetCondition is one observation of a subset's state.
type UnitedDeploymentSubsetCondition struct {
	// Type is the kind of condition.
	Type UnitedDeploymentSubsetConditionType `json:"type"`
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

// UnitedDeploymentCondition is one observation of a UnitedDeployment's state.
type UnitedDeploymentCondition struct {
	// Type is the kind of condition.
	// +optional
	Type UnitedDeploymentConditionType `json:"type,omitempty"`
	// Status is True, False or Unknown.
	// +optional
	Status v1.ConditionStatus `json:"status,omitempty"`
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

// UnitedDeploymentUpdateStatus reports the progress of an update.
type UnitedDeploymentUpdateStatus struct {
	// UpdatedRevision is the name of the ControllerRevision the subsets are being updated to.
	// +optional
	UpdatedRevision string `json:"updatedRevision,omitempty"`
	// CurrentPartitions maps each subset name to the partition its workload has now.
	// +optional
	CurrentPartitions map[string]int32 `json:"currentPartitions,omitempty"`
}

// UnitedDeployment spreads the replicas of one workload (StatefulSet, Advanced StatefulSet, CloneSet
// or Deployment) over several groups of nodes, running one workload per group.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.labelSelector
// +kubebuilder:resource:shortName=ud,scope=Namespaced
// +kubebuilder:printcolumn:name="DESIRED",type="integer",JSONPath=".spec.replicas",description="The desired number of pods."
// +kubebuilder:printcolumn:name="CURRENT",type="integer",JSONPath=".status.replicas",description="The number of pods."
// +kubebuilder:printcolumn:name="UPDATED",type="integer",JSONPath=".status.updatedReplicas",description="The number of pods at the current revision."
// +kubebuilder:printcolumn:name="READY",type="integer",JSONPath=".status.readyReplicas",description="The number of ready pods."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."
type UnitedDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec UnitedDeploymentSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status UnitedDeploymentStatus `json:"status,omitempty"`
}

// UnitedDeploymentList is a list of UnitedDeployments.
// +kubebuilder:object:root=true
type UnitedDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the UnitedDeployments.
	Items []UnitedDeployment `json:"items"`
}

func init() {
	SchemeBuilder.Register(&UnitedDeployment{}, &UnitedDeploymentList{})
}
