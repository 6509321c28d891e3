package v1alpha1

// DeletionProtectionKey is the label that protects an object (a Namespace, a workload, a CRD) from
// deletion: the validating webhook refuses to delete it according to the label's value.
const DeletionProtectionKey = "policy.kruise.io/delete-protection"

// Values of DeletionProtectionKey.
const (
	// DeletionProtectionTypeAlways refuses every deletion of the labelled object.
	DeletionProtectionTypeAlways = "Always"
	// DeletionProtectionTypeCascading refuses deletion while the object still has dependents
	// (pods of a workload, objects in a namespace, custom resources of a CRD).
	DeletionProtectionTypeCascading = "Cascading"
)
