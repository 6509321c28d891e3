package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PersistentPodStateSpec says which workload's pods to remember and what to remember about them.
type PersistentPodStateSpec struct {
	// TargetReference names the workload, in the same namespace, whose pods' state is kept.
	TargetReference PersistentPodStateTargetReference `json:"targetRef"`
	// RequiredPersistentTopology makes a recreated pod land, as a hard constraint, in the same
	// topology its predecessor of the same name ran in.
	// +optional
	RequiredPersistentTopology *PersistentPodStateNodeTopologyTerm `json:"requiredPersistentTopology,omitempty"`
	// PreferredPersistentTopology makes a recreated pod prefer the topology its predecessor ran in.
	// +optional
	PreferredPersistentTopology []PersistentPodStatePreferredTopologyTerm `json:"preferredPersistentTopology,omitempty"`
	// PersistentPodAnnotations are pod annotations whose values are recorded and restored on the
	// pod's successor.
	// +optional
	PersistentPodAnnotations []PersistentPodStatePersistentPodAnnotation `json:"persistentPodAnnotations,omitempty"`
	// PersistentPodStateRetentionPolicy says when recorded states are dropped; WhenScaled when empty.
	// +optional
	PersistentPodStateRetentionPolicy PersistentPodStateRetentionPolicyType `json:"persistentPodStateRetentionPolicy,omitempty"`
}

// PersistentPodStateTargetReference points at a workload in the same namespace.
type PersistentPodStateTargetReference struct {
	// APIVersion is the group/version of the workload.
	APIVersion string `json:"apiVersion"`
	// Kind is the workload's kind.
	Kind string `json:"kind"`
	// Name is the workload's name.
	Name string `json:"name"`
}

// PersistentPodStateRetentionPolicyType names when recorded pod states are dropped.
type PersistentPodStateRetentionPolicyType string

const (
	// PersistentPodStateRetainWhenScaled drops the state of a pod removed by scale-in (the default).
	PersistentPodStateRetainWhenScaled PersistentPodStateRetentionPolicyType = "WhenScaled"
	// PersistentPodStateRetainWhenDeleted keeps states through scale-in and drops them only when the
	// workload is deleted.
	PersistentPodStateRetainWhenDeleted PersistentPodStateRetentionPolicyType = "WhenDeleted"
)

// PersistentPodStatePersistentPodAnnotation names one annotation to record.
type PersistentPodStatePersistentPodAnnotation struct {
	// Key is the annotation's key.
	Key string `json:"key"`
}

// PersistentPodStatePreferredTopologyTerm is a weighted topology preference.
type PersistentPodStatePreferredTopologyTerm struct {
	// Weight is the preference's weight, 1 to 100.
	Weight int32 `json:"weight"`
	// Preference lists the node labels that make up the topology.
	Preference PersistentPodStateNodeTopologyTerm `json:"preference"`
}

// PersistentPodStateNodeTopologyTerm lists node label keys whose values define a topology domain.
type PersistentPodStateNodeTopologyTerm struct {
	// NodeTopologyKeys are the node label keys, such as a zone or hostname label.
	NodeTopologyKeys []string `json:"nodeTopologyKeys"`
}

// PersistentPodStateStatus is the observed state of a PersistentPodState.
type PersistentPodStateStatus struct {
	// ObservedGeneration is the spec generation the controller last acted on.
	ObservedGeneration int64 `json:"observedGeneration"`
	// PodStates maps pod names to their recorded states.
	// +optional
	PodStates map[string]PersistentPodStatePodState `json:"podStates,omitempty"`
	// Conditions: InjectionRegistered says whether the API server sends the creations of the pods it keeps the state of to Kruise for the
	// current generation. Kruise only (not in OpenKruise).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PersistentPodStateInjectionRegistered is the condition type that says whether the injection
// webhook entry of the PersistentPodState's current generation is in place.
const PersistentPodStateInjectionRegistered = "InjectionRegistered"

// PersistentPodStatePodState is what was recorded about one pod.
type PersistentPodStatePodState struct {
	// NodeName is the node the pod ran on.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// NodeTopologyLabels are the topology labels of that node.
	// +optional
	NodeTopologyLabels map[string]string `json:"nodeTopologyLabels,omitempty"`
	// Annotations are the recorded pod annotations.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Registered",type="string",JSONPath=".status.conditions[?(@.type=='InjectionRegistered')].status",priority=1,description="Whether the creations of the pods it keeps the state of are sent to Kruise."
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."

// PersistentPodState records where, and with which annotations, the pods of a workload ran, so that
// a pod recreated under the same name comes back to the same place with the same annotations.
type PersistentPodState struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to record.
	Spec PersistentPodStateSpec `json:"spec,omitempty"`
	// Status holds the recorded states.
	Status PersistentPodStateStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PersistentPodStateList is a list of PersistentPodState.
type PersistentPodStateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the records.
	Items []PersistentPodState `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PersistentPodState{}, &PersistentPodStateList{})
}
