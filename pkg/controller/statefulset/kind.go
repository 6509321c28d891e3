package statefulset

import (
	"context"
	"errors"
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

// kind is the Advanced StatefulSet's part of the workload reconcile (workloadloop.Kind).
type kind struct{ r *Reconciler }

var _ workloadloop.Kind[*v1beta1.StatefulSet, *observation, Plan, v1beta1.StatefulSetStatus] = kind{}

func (k kind) Observe(ctx context.Context, set *v1beta1.StatefulSet, live bool) (*observation, error) {
	return k.r.observe(ctx, set, live)
}

// ObserveFailed refuses a spec the set cannot run (refusal) with a condition, an event and a
// terminal error; any other error is retried.
func (k kind) ObserveFailed(ctx context.Context, key string, set *v1beta1.StatefulSet, err error) (ctrl.Result, error) {
	if ref := (*refusal)(nil); errors.As(err, &ref) {
		return k.r.refuseSpec(ctx, key, set, ref)
	}
	return ctrl.Result{}, fmt.Errorf("observe statefulset %s: %w", key, err)
}

func (kind) Pods(obs *observation) map[string]*corev1.Pod { return obs.pods }

func (kind) Plan(obs *observation, now time.Time) Plan { return Compute(obs.snap, now) }

func (k kind) Apply(ctx context.Context, set *v1beta1.StatefulSet, obs *observation, plan Plan) ApplyErrors {
	return k.r.apply(ctx, set, obs, plan)
}

func (kind) PreDownload(set *v1beta1.StatefulSet, obs *observation) (predownload.Input, bool) {
	if obs.newRevision != nil {
		return predownload.Input{}, false // the update revision is created first
	}
	return preDownloadInput(set, obs), true
}

func (kind) Waits(_ *v1beta1.StatefulSet, plan Plan) (string, []string) {
	return refusalMessage(plan.Refusals), plan.Notes
}

// Status is the set's status with its failure, invalid-spec and progress conditions; it reports
// the progress event and the metrics.
func (k kind) Status(set *v1beta1.StatefulSet, obs *observation, errs ApplyErrors, now time.Time) (v1beta1.StatefulSetStatus, bool) {
	status := ComputeStatus(obs.snap, now, set.Status, set.Generation, obs.selector.String(), obs.claims)
	status.CollisionCount = ptr.To(obs.collisionCount)
	status.Conditions = failureConditions(status.Conditions, errs, now)
	status.Conditions = invalidSpecCondition(status.Conditions, nil, now)
	status.Conditions = setCondition(status.Conditions, ConditionProgressing, progressCondition(set, &status, &set.Status, now))
	k.r.reportProgress(set, &status)
	k.r.reportMetrics(set, obs, status, now)
	return status, significant(&set.Status, &status, ptr.Deref(set.Spec.Replicas, 1))
}

func (kind) StatusOf(set *v1beta1.StatefulSet) v1beta1.StatefulSetStatus { return set.Status }

func (kind) Requeue(set *v1beta1.StatefulSet, plan Plan, status v1beta1.StatefulSetStatus, now time.Time, q *podcontrol.Requeue) {
	q.At(now, plan.Next)
	q.At(now, ProgressDeadlineAt(set, &status))
}

// Forget drops the metrics of a set that is gone.
func (kind) Forget(req ctrl.Request) { workload(req.Namespace, req.Name).Forget() }
