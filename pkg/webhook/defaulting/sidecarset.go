package defaulting

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// failingDefaulter adapts a defaulting function that may fail to controller-runtime's Defaulter;
// an error refuses the request.
type failingDefaulter[T runtime.Object] func(T) error

// Default applies the defaults.
func (f failingDefaulter[T]) Default(_ context.Context, obj T) error {
	return f(obj)
}

// defaultSidecarSetV1beta1 defaults a SidecarSet as OpenKruise's SidecarSet webhook does on
// create and on update, then writes, as it does, the hashes of the defaulted spec into the
// annotations sidecarrules.HashAnnotation (sidecarrules.Hash) and sidecarrules.HashWithoutImageAnnotation
// (sidecarrules.HashWithoutImage), replacing any value the request carried.
func defaultSidecarSetV1beta1(obj *v1beta1.SidecarSet) error {
	defaults.SetDefaultsSidecarSetV1beta1(obj)
	return setSidecarSetHashes(obj, &obj.Spec)
}

// defaultSidecarSet is defaultSidecarSetV1beta1 for a v1alpha1 SidecarSet. The hashes are over
// the spec converted to v1beta1, the version a SidecarSet is stored and hashed in elsewhere (the
// containers' JSON is the same in both versions).
func defaultSidecarSet(obj *v1alpha1.SidecarSet) error {
	defaults.SetDefaultsSidecarSet(obj)
	hub := &v1beta1.SidecarSet{}
	if err := obj.ConvertTo(hub); err != nil {
		return err
	}
	return setSidecarSetHashes(obj, &hub.Spec)
}

// setSidecarSetHashes writes the two hash annotations of spec on obj.
func setSidecarSetHashes(obj metav1.Object, spec *v1beta1.SidecarSetSpec) error {
	hash, err := sidecarrules.Hash(spec)
	if err != nil {
		return err
	}
	withoutImage, err := sidecarrules.HashWithoutImage(spec)
	if err != nil {
		return err
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[sidecarrules.HashAnnotation] = hash
	annotations[sidecarrules.HashWithoutImageAnnotation] = withoutImage
	obj.SetAnnotations(annotations)
	return nil
}
