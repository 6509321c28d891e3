package v1alpha1

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations that carry, across a conversion, the fields the other API version has no place for.
//
// Converting an object into a version that lacks some of its fields writes those fields, as JSON
// shaped like the object ({"spec":{...},"status":{...}}), into one of these annotations on the
// converted object. Converting back reads the annotation, puts the fields back where they belong
// and removes the annotation, so that a round trip through the other version loses nothing. The
// annotation is written only when at least one such field is set.
const (
	// ConversionV1beta1OnlyAnnotation, on a v1alpha1 object, holds the fields of its v1beta1 form
	// that v1alpha1 cannot express.
	ConversionV1beta1OnlyAnnotation = "apps.kruise.io/conversion-v1beta1-only"
	// ConversionV1alpha1OnlyAnnotation, on a v1beta1 object, holds the fields of its v1alpha1 form
	// that v1beta1 cannot express.
	ConversionV1alpha1OnlyAnnotation = "apps.kruise.io/conversion-v1alpha1-only"
)

// putStash records stash as JSON under key on meta, or removes key when present is false. A key
// left over from elsewhere is always replaced, so that it never describes stale fields.
func putStash(meta *metav1.ObjectMeta, key string, stash any, present bool) error {
	if !present {
		dropAnnotation(meta, key)
		return nil
	}
	raw, err := json.Marshal(stash)
	if err != nil {
		return fmt.Errorf("encoding annotation %s: %w", key, err)
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[key] = string(raw)
	return nil
}

// takeStash decodes the JSON under key on meta into stash and removes key from meta. It reports
// whether the annotation was there.
func takeStash(meta *metav1.ObjectMeta, key string, stash any) (bool, error) {
	raw, ok := meta.Annotations[key]
	if !ok {
		return false, nil
	}
	dropAnnotation(meta, key)
	if err := json.Unmarshal([]byte(raw), stash); err != nil {
		return false, fmt.Errorf("decoding annotation %s: %w", key, err)
	}
	return true, nil
}

// dropAnnotation removes key from meta, and leaves the annotations nil rather than empty when it
// was the only one.
func dropAnnotation(meta *metav1.ObjectMeta, key string) {
	if _, ok := meta.Annotations[key]; !ok {
		return
	}
	delete(meta.Annotations, key)
	if len(meta.Annotations) == 0 {
		meta.Annotations = nil
	}
}

// copyPtr returns a new pointer to a copy of *p, or nil. It is meant for types without pointers
// inside (numbers, strings, bools, intstr.IntOrString).
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// deepCopyItems deep-copies a slice of a type that has a generated DeepCopyInto, keeping nil nil.
func deepCopyItems[T any, PT interface {
	*T
	DeepCopyInto(*T)
}](in []T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i := range in {
		PT(&in[i]).DeepCopyInto(&out[i])
	}
	return out
}

// copyStrings copies a string slice, keeping nil nil.
func copyStrings(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	copy(out, in)
	return out
}

// copyStringMap copies a string map, keeping nil nil.
func copyStringMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
