package cloneset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// What a CloneSet owns, as OpenKruise (and every Kubernetes workload controller) keeps it
// (podcontrol.Orphans, podcontrol.Strays): the CloneSet replaces the pods it releases; names of
// pods it no longer has are dropped from spec.scaleStrategy.podsToDelete.

// applyOwnership adopts and releases the observed pods and trims podsToDelete.
func (r *Reconciler) applyOwnership(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation, done *podcontrol.Batch) error {
	ctl, o := r.Control(), r.owner(cs)
	return errors.Join(ctl.Adopt(ctx, o, obs.adopt, done), ctl.Release(ctx, o, obs.release, done), r.trimPodsToDelete(ctx, cs, obs))
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
