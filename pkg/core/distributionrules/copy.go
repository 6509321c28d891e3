package distributionrules

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Annotations of a copy, as OpenKruise writes them.
const (
	// FromAnnotation names the distribution a copy comes from.
	FromAnnotation = "kruise.io/resourcedistribution.resource.from"
	// HashAnnotation is the SHA-256 (hex) of the distribution's spec.resource.
	HashAnnotation = "kruise.io/resourcedistribution.resource.hashcode"
)

// Kinds are the kinds a distribution copies.
var Kinds = []schema.GroupVersionKind{{Version: "v1", Kind: "Secret"}, {Version: "v1", Kind: "ConfigMap"}}

// Kind is the distribution's GroupVersionKind, as its copies' owner reference names it.
var Kind = appsv1alpha1.GroupVersion.WithKind("ResourceDistribution")

// Decode reads spec.resource: a Secret or ConfigMap with a name. Its namespace, if any, is
// dropped (each copy gets its own).
func Decode(raw []byte) (*unstructured.Unstructured, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty resource")
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	if !slices.Contains(Kinds, u.GroupVersionKind()) {
		return nil, fmt.Errorf("%s %s is not distributable: only v1 Secret and v1 ConfigMap are", u.GetAPIVersion(), u.GetKind())
	}
	if u.GetName() == "" {
		return nil, fmt.Errorf("metadata.name is required")
	}
	u.SetNamespace("")
	return u, nil
}

// Hash is the hash code a copy records: SHA-256 of spec.resource as stored.
func Hash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// Want is the copy of resource for namespace: resource with the namespace, the distribution as
// controller owner, and the two annotations; an existing copy (old, nil when none) keeps its
// other labels, annotations and finalizers and its resourceVersion. A Secret's stringData goes
// into data and its type defaults to Opaque, as the API server stores them, so that a copy
// compares equal to what it stores.
func Want(rd *appsv1alpha1.ResourceDistribution, resource *unstructured.Unstructured, namespace string, old *unstructured.Unstructured) *unstructured.Unstructured {
	out := normalized(resource)
	out.SetNamespace(namespace)
	labels, annotations := out.GetLabels(), out.GetAnnotations()
	if old != nil {
		labels = merged(labels, old.GetLabels())
		annotations = merged(annotations, old.GetAnnotations())
		out.SetFinalizers(sets.List(sets.New(out.GetFinalizers()...).Insert(old.GetFinalizers()...)))
		out.SetResourceVersion(old.GetResourceVersion())
		out.SetOwnerReferences(old.GetOwnerReferences())
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[HashAnnotation] = Hash(rd.Spec.Resource.Raw)
	annotations[FromAnnotation] = rd.Name
	out.SetLabels(labels)
	out.SetAnnotations(annotations)
	if !slices.ContainsFunc(out.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == rd.UID }) {
		out.SetOwnerReferences(append(out.GetOwnerReferences(), *metav1.NewControllerRef(rd, Kind)))
	}
	return out
}

// merged is want with the keys of have it lacks.
func merged(want, have map[string]string) map[string]string {
	if len(have) == 0 {
		return want
	}
	out := maps.Clone(have)
	maps.Copy(out, want)
	return out
}

// normalized is a copy of resource as the API server stores it (see Want).
func normalized(resource *unstructured.Unstructured) *unstructured.Unstructured {
	out := resource.DeepCopy()
	if out.GetKind() != "Secret" {
		return out
	}
	if t, _, _ := unstructured.NestedString(out.Object, "type"); t == "" {
		out.Object["type"] = "Opaque"
	}
	if sd, ok, _ := unstructured.NestedStringMap(out.Object, "stringData"); ok {
		data, _, _ := unstructured.NestedMap(out.Object, "data")
		if data == nil {
			data = map[string]any{}
		}
		for k, v := range sd {
			data[k] = base64.StdEncoding.EncodeToString([]byte(v))
		}
		out.Object["data"] = data
		delete(out.Object, "stringData")
	}
	return out
}

// NeedsUpdate reports whether a copy's content (all but apiVersion, kind, metadata and status)
// differs from the distribution's resource.
func NeedsUpdate(have *unstructured.Unstructured, resource *unstructured.Unstructured) bool {
	return !equality.Semantic.DeepEqual(content(have.Object), content(normalized(resource).Object))
}

// content is an object's top-level fields but apiVersion, kind, metadata and status, an empty
// map or a null left out (the API server keeps neither).
func content(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if m, ok := v.(map[string]any); v == nil || (ok && len(m) == 0) {
			continue
		}
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		out[k] = v
	}
	return out
}

// ControlledBy reports whether the distribution is obj's controller (same kind and name, as
// OpenKruise checks it).
func ControlledBy(obj metav1.Object, rd *appsv1alpha1.ResourceDistribution) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.APIVersion == Kind.GroupVersion().String() && ref.Kind == Kind.Kind && ref.Name == rd.Name
}
