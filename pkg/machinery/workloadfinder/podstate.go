package workloadfinder

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// PodStateTarget is the group and kind of a targetRef, and whether it is a StatefulSet (apps) or
// an Advanced StatefulSet (apps.kruise.io), which are always run.
func PodStateTarget(ref v1alpha1.PersistentPodStateTargetReference) (schema.GroupKind, bool) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupKind{}, false
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	return gk, gk == StatefulSetKind || gk == KruiseStatefulSetKind
}

// PodStateSupported reports whether a PersistentPodState may target ref: a StatefulSet (PodStateTarget),
// or a kind of whitelist, the custom workloads (CustomWorkloads with
// PersistentPodStateWhitelist); custom is true for the latter.
func PodStateSupported(ref v1alpha1.PersistentPodStateTargetReference, whitelist []schema.GroupKind) (supported, custom bool) {
	gk, ok := PodStateTarget(ref)
	if ok {
		return true, false
	}
	if gk.Kind == "" {
		return false, false
	}
	return slices.Contains(whitelist, gk), true
}
