package cloneset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/inplace/engine"
	"github.com/kruise-ng/kruise/pkg/podcontrol"
)

// What a CloneSet owns, as OpenKruise (and every Kubernetes workload controller) keeps it: pods
// that match its selector and have no controller are adopted; pods it controls whose labels stop
// matching are released (their controller reference removed; they keep running, and the CloneSet
// replaces them); names of pods it no longer has are dropped from spec.scaleStrategy.podsToDelete.

// ownerIndex indexes pods by the UID of the CloneSet that controls them.
const ownerIndex = "cloneset.controller.uid"

// controllerUID is ownerIndex's value for obj: its controlling CloneSet's UID.
func controllerUID(obj client.Object) []string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil && ref.Kind == gvk.Kind && ref.APIVersion == gvk.GroupVersion().String() {
		return []string{string(ref.UID)}
	}
	return nil
}

// observeOwnership finds the pods to adopt (orphans among those matching the selector, listed in
// matching) and to release (controlled pods that no longer match sel). Without the owner index (a
// client that is not the manager's cache) nothing is released.
func (r *Reconciler) observeOwnership(ctx context.Context, cs *v1alpha1.CloneSet, sel labels.Selector, matching []corev1.Pod, obs *observation) error {
	for i := range matching {
		p := &matching[i]
		if metav1.GetControllerOfNoCopy(p) == nil && p.DeletionTimestamp == nil &&
			p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
			obs.adopt = append(obs.adopt, p)
		}
	}
	if !r.ownerIndexed {
		return nil
	}
	var owned corev1.PodList
	if err := r.Client.List(ctx, &owned, client.InNamespace(cs.Namespace), client.MatchingFields{ownerIndex: string(cs.UID)},
		client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list the pods it controls: %w", err)
	}
	for i := range owned.Items {
		if p := &owned.Items[i]; !sel.Matches(labels.Set(p.Labels)) && p.DeletionTimestamp == nil {
			obs.release = append(obs.release, p)
		}
	}
	return nil
}

// applyOwnership adopts and releases the observed pods and trims podsToDelete.
func (r *Reconciler) applyOwnership(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation, done *podcontrol.Batch) error {
	var errs []error
	ref, err := json.Marshal(metav1.NewControllerRef(cs, gvk))
	if err != nil {
		return err
	}
	for _, p := range obs.adopt {
		// Merged by UID into the pod's owner references, for this pod only (uid precondition).
		patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[%s],"uid":%q}}`, ref, p.UID)
		if err := r.Client.Patch(ctx, engine.Ref(p), client.RawPatch(types.StrategicMergePatchType, []byte(patch))); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("adopt pod %s: %w", p.Name, err))
			continue
		}
		done.Add("Adopted", "adopted", p.Name, "it matches the selector and had no controller")
	}
	for _, p := range obs.release {
		patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"$patch":"delete","uid":%q}],"uid":%q}}`, cs.UID, p.UID)
		if err := r.Client.Patch(ctx, engine.Ref(p), client.RawPatch(types.StrategicMergePatchType, []byte(patch))); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("release pod %s: %w", p.Name, err))
			continue
		}
		done.Add("Released", "released", p.Name, "its labels no longer match the selector")
	}
	return errors.Join(append(errs, r.trimPodsToDelete(ctx, cs, obs))...)
}

// trimPodsToDelete drops from spec.scaleStrategy.podsToDelete the names of pods the CloneSet no
// longer has, if the list is still the one read.
func (r *Reconciler) trimPodsToDelete(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation) error {
	list := cs.Spec.ScaleStrategy.PodsToDelete
	keep := slices.DeleteFunc(slices.Clone(list), func(name string) bool { return obs.pods[name] == nil })
	if len(keep) == len(list) {
		return nil
	}
	const path = "/spec/scaleStrategy/podsToDelete"
	ops := []map[string]any{{"op": "test", "path": path, "value": list}, {"op": "replace", "path": path, "value": keep}}
	if len(keep) == 0 {
		ops[1] = map[string]any{"op": "remove", "path": path}
	}
	body, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, cs.DeepCopy(), client.RawPatch(types.JSONPatchType, body)); err != nil && !apierrors.IsNotFound(err) &&
		!apierrors.IsInvalid(err) { // Invalid: the list changed meanwhile; the next reconcile reads it again
		return fmt.Errorf("drop gone pods from spec.scaleStrategy.podsToDelete: %w", err)
	}
	return nil
}
