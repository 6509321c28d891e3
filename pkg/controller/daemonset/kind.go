package daemonset

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/predownload"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// kind is the Advanced DaemonSet's part of the workload reconcile (workloadloop.Kind).
type kind struct{ r *Reconciler }

var _ workloadloop.Kind[*v1beta1.DaemonSet, *observation, Plan, v1beta1.DaemonSetStatus] = kind{}

func (k kind) Observe(ctx context.Context, ds *v1beta1.DaemonSet, live bool) (*observation, error) {
	return k.r.observe(ctx, ds, live)
}

// ObserveFailed reports the error as an InvalidSpec event, and retries.
func (k kind) ObserveFailed(_ context.Context, key string, ds *v1beta1.DaemonSet, err error) (ctrl.Result, error) {
	k.r.Control().Event(k.r.owner(ds), corev1.EventTypeWarning, "InvalidSpec", "%v", err)
	return ctrl.Result{}, fmt.Errorf("observe daemonset %s: %w", key, err)
}

func (kind) Pods(obs *observation) map[string]*corev1.Pod { return obs.pods }

func (kind) Plan(obs *observation, now time.Time) Plan { return Compute(obs.snap, now) }

func (k kind) Apply(ctx context.Context, ds *v1beta1.DaemonSet, obs *observation, plan Plan) ApplyErrors {
	return k.r.apply(ctx, ds, obs, plan)
}

func (kind) PreDownload(ds *v1beta1.DaemonSet, obs *observation) (predownload.Input, bool) {
	if obs.newRevision != nil {
		return predownload.Input{}, false // the update revision is created first
	}
	return preDownloadInput(ds, obs), true
}

func (kind) Waits(_ *v1beta1.DaemonSet, plan Plan) (string, []string) { return "", plan.Notes }

// Status is the set's status (the collision count only once there is one); it reports the metrics.
func (k kind) Status(ds *v1beta1.DaemonSet, obs *observation, _ ApplyErrors, now time.Time) (v1beta1.DaemonSetStatus, bool) {
	status := ComputeStatus(obs.snap, now, ds.Status, ds.Generation)
	status.CollisionCount = ptr.To(obs.collisionCount)
	if ds.Status.CollisionCount == nil && obs.collisionCount == 0 {
		status.CollisionCount = nil
	}
	k.r.reportMetrics(ds, obs, status, now)
	return status, significant(&ds.Status, &status)
}

func (kind) StatusOf(ds *v1beta1.DaemonSet) v1beta1.DaemonSetStatus { return ds.Status }

func (kind) Requeue(_ *v1beta1.DaemonSet, plan Plan, _ v1beta1.DaemonSetStatus, now time.Time, q *podcontrol.Requeue) {
	q.At(now, plan.Next)
}

// Forget drops the metrics of a set that is gone.
func (kind) Forget(req ctrl.Request) { workload(req.Namespace, req.Name).Forget() }
