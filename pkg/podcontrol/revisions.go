package podcontrol

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/revision"
)

// ApplyRevision creates the update revision dec decided on, or renumbers it to be the newest; it
// returns the revision as written (nil dec: nothing to do).
func (c *Control) ApplyRevision(ctx context.Context, dec *revision.Decision) (*appsv1.ControllerRevision, error) {
	if dec == nil {
		return nil, nil
	}
	rev := dec.Update
	if dec.Create {
		if err := c.Client.Create(ctx, rev); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create revision %s: %w", rev.Name, err)
		}
	} else if err := c.Client.Update(ctx, rev); err != nil {
		return nil, fmt.Errorf("renumber revision %s: %w", rev.Name, err)
	}
	return rev, nil
}

// PruneRevisions deletes the oldest revisions not in use beyond limit (revisionHistoryLimit).
func (c *Control) PruneRevisions(ctx context.Context, o Owner, revs map[string]*appsv1.ControllerRevision, inUse map[string]bool, limit int32) {
	all := make([]*appsv1.ControllerRevision, 0, len(revs))
	for _, rev := range revs {
		all = append(all, rev)
	}
	for _, rev := range revision.ToDelete(all, inUse, limit) {
		if err := c.Client.Delete(ctx, rev); err != nil && !apierrors.IsNotFound(err) {
			c.Event(o, corev1.EventTypeWarning, "FailedDeleteRevision", "delete revision %s: %v", rev.Name, err)
		}
	}
}

// WriteStatus writes status as obj's whole status in one JSON patch ("add" replaces an existing
// member), without a resourceVersion precondition: the controller is the status's only writer, so
// an object read from a cache one write behind must not cost a conflict and a retried reconcile.
// (A merge patch of the difference would be wrong here: computed against a stale status it would
// leave fields of the last write in place.) obj is not modified.
func (c *Control) WriteStatus(ctx context.Context, obj client.Object, status any) error {
	body, err := json.Marshal([]map[string]any{{"op": "add", "path": "/status", "value": status}})
	if err != nil {
		return err
	}
	if err := c.Client.Status().Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.JSONPatchType, body)); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}
