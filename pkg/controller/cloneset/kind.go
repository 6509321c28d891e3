package cloneset

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/predownload"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// kind is the CloneSet's part of the workload reconcile (workloadloop.Kind).
type kind struct{ r *Reconciler }

var _ workloadloop.Kind[*v1alpha1.CloneSet, *observation, Plan, v1alpha1.CloneSetStatus] = kind{}

func (k kind) Observe(ctx context.Context, cs *v1alpha1.CloneSet, live bool) (*observation, error) {
	return k.r.observe(ctx, cs, live)
}

func (k kind) ObserveFailed(_ context.Context, key string, cs *v1alpha1.CloneSet, err error) (ctrl.Result, error) {
	if pe := (*podcontrol.PredecessorError)(nil); errors.As(err, &pe) {
		k.r.event(cs, corev1.EventTypeNormal, "WaitingForPredecessor", "%v", pe)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return ctrl.Result{}, fmt.Errorf("observe cloneset %s: %w", key, err)
}

func (kind) Pods(obs *observation) map[string]*corev1.Pod { return obs.pods }

func (k kind) Plan(obs *observation, now time.Time) Plan {
	r := k.r
	return Compute(obs.snap, now, Options{PartitionRollback: r.PartitionRollback, PreparingUpdateAsUpdate: r.PreparingUpdateAsUpdate,
		ScalingExcludePreparingDelete: r.ScalingExcludePreparingDelete})
}

func (k kind) Apply(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation, plan Plan) ApplyErrors {
	if plan.ScaleUpLimit != nil {
		k.r.event(cs, corev1.EventTypeWarning, "ScaleUpLimited", "scale-up limited by scaleStrategy.maxUnavailable: %d creations allowed now",
			*plan.ScaleUpLimit)
	}
	return k.r.apply(ctx, cs, obs, plan)
}

func (kind) PreDownload(cs *v1alpha1.CloneSet, obs *observation) (predownload.Input, bool) {
	if obs.newRevision != nil {
		return predownload.Input{}, false // the update revision is created first
	}
	return preDownloadInput(cs, obs), true
}

func (kind) Waits(cs *v1alpha1.CloneSet, plan Plan) (string, []string) {
	return refusalMessage(cs, plan.Refusals), plan.Notes
}

func (k kind) Status(cs *v1alpha1.CloneSet, obs *observation, errs ApplyErrors, now time.Time) (v1alpha1.CloneSetStatus, bool) {
	status := ComputeStatus(obs.snap, now, cs.Status, cs.Generation, errs)
	status.CollisionCount = obs.collisionCount
	k.r.reportProgress(cs, &status)
	k.r.reportMetrics(cs, obs, status, now)
	return status, significant(&cs.Status, &status, ptr.Deref(cs.Spec.Replicas, 1))
}

func (kind) StatusOf(cs *v1alpha1.CloneSet) v1alpha1.CloneSetStatus { return cs.Status }

func (kind) Requeue(cs *v1alpha1.CloneSet, plan Plan, status v1alpha1.CloneSetStatus, now time.Time, q *podcontrol.Requeue) {
	q.After(plan.RequeueAfter(now))
	q.At(now, ProgressDeadline(&cs.Spec, &status))
}

// Forget drops what the controller keeps in memory about a CloneSet that is gone.
func (k kind) Forget(req ctrl.Request) {
	workload(req.Namespace, req.Name).Forget()
	k.r.rolloutStarts.Delete(req.String())
}
