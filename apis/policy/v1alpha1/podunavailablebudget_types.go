package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PodUnavailableBudgetSpec says which pods a PodUnavailableBudget protects and how many of them may
// be unavailable at once.
type PodUnavailableBudgetSpec struct {
	// Selector picks the protected pods by label; it is ignored when TargetReference is set.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// TargetReference names the workload whose pods are protected.
	// +optional
	TargetReference *PodUnavailableBudgetTargetReference `json:"targetRef,omitempty"`

	// MaxUnavailable is the number or percentage of protected pods that may be unavailable at the
	// same time; it is mutually exclusive with MinAvailable.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MinAvailable is the number or percentage of protected pods that must stay available.
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
}

// PodUnavailableBudgetTargetReference points at a workload in the budget's namespace.
type PodUnavailableBudgetTargetReference struct {
	// APIVersion is the group/version of the workload.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// Kind is the workload's kind.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Name is the workload's name.
	// +optional
	Name string `json:"name,omitempty"`
}

// PodUnavailableBudgetStatus is the observed state of a PodUnavailableBudget.
type PodUnavailableBudgetStatus struct {
	// ObservedGeneration is the spec generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// DisruptedPods maps names of pods admitted for eviction or deletion to the time of admission;
	// they count as unavailable until the controller sees them go or the entry expires.
	// +optional
	DisruptedPods map[string]metav1.Time `json:"disruptedPods,omitempty"`

	// UnavailablePods maps names of pods admitted for an update that makes them unavailable to the
	// time of admission.
	// +optional
	UnavailablePods map[string]metav1.Time `json:"unavailablePods,omitempty"`

	// UnavailableAllowed is how many more protected pods may become unavailable now.
	UnavailableAllowed int32 `json:"unavailableAllowed"`

	// CurrentAvailable is how many protected pods are available now.
	CurrentAvailable int32 `json:"currentAvailable"`

	// DesiredAvailable is how many protected pods must stay available.
	DesiredAvailable int32 `json:"desiredAvailable"`

	// TotalReplicas is how many pods the budget protects.
	TotalReplicas int32 `json:"totalReplicas"`

	// Conditions: ProtectionRegistered says whether the API server sends the disruptions of the pods it guards to Kruise for the
	// current generation. Kruise only (not in OpenKruise).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PodUnavailableBudgetProtectionRegistered is the condition type that says whether the
// protection webhook entry of the budget's current generation is in place.
const PodUnavailableBudgetProtectionRegistered = "ProtectionRegistered"

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=pub
// +kubebuilder:printcolumn:name="Allowed",type="integer",JSONPath=".status.unavailableAllowed",description="Protected pods that may still become unavailable."
// +kubebuilder:printcolumn:name="Current",type="integer",JSONPath=".status.currentAvailable",description="Protected pods available now."
// +kubebuilder:printcolumn:name="Desired",type="integer",JSONPath=".status.desiredAvailable",description="Protected pods that must stay available."
// +kubebuilder:printcolumn:name="Total",type="integer",JSONPath=".status.totalReplicas",description="Pods the budget protects."
// +kubebuilder:printcolumn:name="Registered",type="string",JSONPath=".status.conditions[?(@.type=='ProtectionRegistered')].status",priority=1,description="Whether the disruptions of the pods it guards are sent to Kruise."

// PodUnavailableBudget limits how many of a set of pods may be unavailable at once through voluntary
// disruptions such as eviction, deletion and in-place updates.
type PodUnavailableBudget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired protection.
	Spec PodUnavailableBudgetSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status PodUnavailableBudgetStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PodUnavailableBudgetList is a list of PodUnavailableBudget.
type PodUnavailableBudgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the budgets.
	Items []PodUnavailableBudget `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PodUnavailableBudget{}, &PodUnavailableBudgetList{})
}

// Annotations and operations of PodUnavailableBudget, as OpenKruise v1.9.0 names them.
const (
	// PubProtectOperationAnnotation, on a PodUnavailableBudget, lists (comma-separated) the
	// operations it guards: DELETE, UPDATE, EVICT, RESIZE; all of them when absent or empty.
	PubProtectOperationAnnotation = "kruise.io/pub-protect-operations"
	// PubProtectTotalReplicasAnnotation, on a PodUnavailableBudget, is the number of pods it
	// counts on instead of its workloads' replicas.
	PubProtectTotalReplicasAnnotation = "pub.kruise.io/protect-total-replicas"
	// PodPubNoProtectionAnnotation set to "true" on a pod leaves it unguarded.
	PodPubNoProtectionAnnotation = "pub.kruise.io/no-protect"
	// PodRelatedPubAnnotation, on a pod, names the PodUnavailableBudget that guards it.
	PodRelatedPubAnnotation = "kruise.io/related-pub"
)

// PubOperation is an operation on a pod a PodUnavailableBudget can guard.
type PubOperation string

// The operations.
const (
	PubUpdateOperation PubOperation = "UPDATE"
	PubDeleteOperation PubOperation = "DELETE"
	PubEvictOperation  PubOperation = "EVICT"
	PubResizeOperation PubOperation = "RESIZE"
)
