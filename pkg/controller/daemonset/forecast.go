package daemonset

import (
	"context"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Snapshot reads ds's nodes, pods and revisions the way the controller does and returns the
// planner's input; nothing is written (kubectl kruise rollout plan).
func (r *Reconciler) Snapshot(ctx context.Context, ds *v1beta1.DaemonSet) (*Snapshot, error) {
	r.defaults()
	obs, err := r.observe(ctx, ds, false)
	if err != nil {
		return nil, err
	}
	return obs.snap, nil
}
