package statefulset

import (
	"context"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Snapshot reads set's pods, claims and revisions the way the controller does and returns the
// planner's input; nothing is written (kubectl kruise rollout plan).
func (r *Reconciler) Snapshot(ctx context.Context, set *v1beta1.StatefulSet) (*Snapshot, error) {
	obs, err := r.observe(ctx, set, false)
	if err != nil {
		return nil, err
	}
	return obs.snap, nil
}
