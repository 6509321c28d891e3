// Package v1beta1 holds the apps.kruise.io/v1beta1 API types of Kruise, wire-compatible with OpenKruise v1.9.0.
// +kubebuilder:object:generate=true
// +groupName=apps.kruise.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "apps.kruise.io", Version: "v1beta1"}

	// SchemeBuilder collects this package's types; each kind's file registers its own.
	SchemeBuilder = &typeRegistry{}

	// SchemeGroupVersion is GroupVersion by the name Kubernetes' generated clients use
	// (github.com/kruise-ng/kruise/client).
	SchemeGroupVersion = GroupVersion
)

// Resource is resource of this package's group, as the generated listers name it.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}

// typeRegistry collects API types for AddToScheme, keeping the API package free of
// controller-runtime.
// +kubebuilder:object:generate=false
type typeRegistry struct{ objects []runtime.Object }

// Register adds objects (a kind and its list) to the types AddToScheme installs.
func (r *typeRegistry) Register(objects ...runtime.Object) { r.objects = append(r.objects, objects...) }

// AddToScheme adds this package's types to a runtime.Scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, SchemeBuilder.objects...)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
