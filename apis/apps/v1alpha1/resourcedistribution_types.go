package v1alpha1

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ResourceDistributionSpec says which resource to copy and into which namespaces.
type ResourceDistributionSpec struct {
	// Resource is the complete object to copy into each target namespace (for example a Secret or a
	// ConfigMap); its namespace is ignored.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:EmbeddedResource
	Resource runtime.RawExtension `json:"resource"`
	// Targets chooses the namespaces the resource is copied into.
	Targets ResourceDistributionTargets `json:"targets"`
}

// ResourceDistributionTargets chooses target namespaces; a namespace is a target when it is listed,
// matched by the label selector or covered by AllNamespaces, and not excluded.
type ResourceDistributionTargets struct {
	// AllNamespaces targets every namespace except the excluded ones and the system namespaces.
	// +optional
	AllNamespaces bool `json:"allNamespaces,omitempty"`
	// ExcludedNamespaces are never targets.
	// +optional
	ExcludedNamespaces ResourceDistributionTargetNamespaces `json:"excludedNamespaces,omitempty"`
	// IncludedNamespaces are targets.
	// +optional
	IncludedNamespaces ResourceDistributionTargetNamespaces `json:"includedNamespaces,omitempty"`
	// NamespaceLabelSelector targets the namespaces whose labels match it.
	// +optional
	NamespaceLabelSelector metav1.LabelSelector `json:"namespaceLabelSelector,omitempty"`
}

// ResourceDistributionTargetNamespaces is a list of namespaces.
type ResourceDistributionTargetNamespaces struct {
	// List holds the namespaces.
	// +optional
	List []ResourceDistributionNamespace `json:"list,omitempty"`
}

// ResourceDistributionNamespace names one namespace.
type ResourceDistributionNamespace struct {
	// Name is the namespace's name.
	// +optional
	Name string `json:"name,omitempty"`
}

// ResourceDistributionStatus is the observed state of a ResourceDistribution.
type ResourceDistributionStatus struct {
	// Desired is how many namespaces the resource should be copied into.
	// +optional
	Desired int32 `json:"desired,omitempty"`
	// Succeeded is how many namespaces hold an up-to-date copy.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// Failed is how many namespaces the copy could not be written to.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// ObservedGeneration is the spec generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions report the kinds of failure met, each with the namespaces concerned.
	// +optional
	Conditions []ResourceDistributionCondition `json:"conditions,omitempty"`
}

// ResourceDistributionConditionType names a kind of distribution failure.
type ResourceDistributionConditionType string

const (
	// ResourceDistributionConflictOccurred: a target namespace already holds a same-named resource
	// not owned by this distribution.
	ResourceDistributionConflictOccurred ResourceDistributionConditionType = "ConflictOccurred"
	// ResourceDistributionNamespaceNotExists: an included namespace does not exist.
	ResourceDistributionNamespaceNotExists ResourceDistributionConditionType = "NamespaceNotExists"
	// ResourceDistributionGetResourceFailed: reading a copy failed.
	ResourceDistributionGetResourceFailed ResourceDistributionConditionType = "GetResourceFailed"
	// ResourceDistributionCreateResourceFailed: creating a copy failed.
	ResourceDistributionCreateResourceFailed ResourceDistributionConditionType = "CreateResourceFailed"
	// ResourceDistributionUpdateResourceFailed: updating a copy failed.
	ResourceDistributionUpdateResourceFailed ResourceDistributionConditionType = "UpdateResourceFailed"
	// ResourceDistributionDeleteResourceFailed: deleting a copy no longer wanted failed.
	ResourceDistributionDeleteResourceFailed ResourceDistributionConditionType = "DeleteResourceFailed"
)

// ResourceDistributionCondition reports one kind of failure and where it happened.
type ResourceDistributionCondition struct {
	// Type is the kind of failure.
	Type ResourceDistributionConditionType `json:"type"`
	// Status is True while the failure persists.
	Status v1.ConditionStatus `json:"status"`
	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a machine-readable reason for the last change.
	// +optional
	Reason string `json:"reason,omitempty"`
	// FailedNamespaces are the namespaces where the failure happened.
	// +optional
	FailedNamespaces []string `json:"failedNamespace,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=distributor
// +kubebuilder:printcolumn:name="TOTAL",type="integer",JSONPath=".status.desired",description="Namespaces the resource should be copied into."
// +kubebuilder:printcolumn:name="SUCCEED",type="integer",JSONPath=".status.succeeded",description="Namespaces holding an up-to-date copy."
// +kubebuilder:printcolumn:name="FAILED",type="integer",JSONPath=".status.failed",description="Namespaces where copying failed."

// ResourceDistribution copies one resource, such as a Secret or ConfigMap, into many namespaces and
// keeps the copies in sync.
type ResourceDistribution struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired distribution.
	Spec ResourceDistributionSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status ResourceDistributionStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceDistributionList is a list of ResourceDistribution.
type ResourceDistributionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the distributions.
	Items []ResourceDistribution `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ResourceDistribution{}, &ResourceDistributionList{})
}
