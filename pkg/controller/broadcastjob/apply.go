package broadcastjob

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// apply carries plan out on job: pod deletions, pod creations (slow start), the status (with the
// creations that failed taken back out of active), then the plan's events and the job's deletion
// at its TTL. Every pod write is recorded in the expectations.
func (r *Reconciler) apply(ctx context.Context, job *v1beta1.BroadcastJob, plan Plan) error {
	key := job.Namespace + "/" + job.Name
	var done podcontrol.Batch
	delErr := podcontrol.Parallel(plan.Delete, func(d Deletion) error { return r.deletePod(ctx, job, key, d, &done) })
	var created atomic.Int32
	createErr := podcontrol.SlowStart(plan.Create, func(node string) error {
		if err := r.createPod(ctx, job, key, node, &done); err != nil {
			return err
		}
		created.Add(1)
		return nil
	})
	done.Flush(r.Recorder, job)
	status := plan.Status
	status.Active -= int32(len(plan.Create)) - created.Load()
	if !equality.Semantic.DeepEqual(job.Status, status) {
		updated := job.DeepCopy()
		updated.Status = status
		if err := r.Client.Status().Update(ctx, updated); err != nil {
			return errors.Join(delErr, createErr, fmt.Errorf("update the status of BroadcastJob %s: %w", key, err))
		}
		if Finished(updated) {
			r.finishing.Store(key, job.UID)
		}
	}
	for _, e := range plan.Events {
		r.event(job, e.Type, e.Reason, "%s", e.Message)
	}
	if plan.DeleteJob {
		ctrl.LoggerFrom(ctx).Info("deleting BroadcastJob after ttlSecondsAfterFinished", "broadcastJob", klog.KObj(job))
		if err := r.Client.Delete(ctx, job, client.Preconditions{UID: &job.UID}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete BroadcastJob %s after its ttlSecondsAfterFinished: %w", key, err)
		}
	}
	return errors.Join(delErr, createErr)
}

// createPod creates the job's pod on node.
func (r *Reconciler) createPod(ctx context.Context, job *v1beta1.BroadcastJob, key, node string, done *podcontrol.Batch) error {
	pod := NewPod(job, node)
	if err := r.Client.Create(ctx, pod); err != nil {
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil // the namespace is going away, the job with it
		}
		r.event(job, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating: %v", err)
		return fmt.Errorf("create the pod of BroadcastJob %s on node %s: %w", key, node, err)
	}
	// The name is the API server's (generateName): recorded once known. No other reconcile of the
	// job runs meanwhile, and the plan's check reads the cache then, not at the watch event.
	r.expectations.ExpectCreate(key, pod.Name, r.Clock.Now())
	done.Add(ReasonSuccessfulCreate, "created", pod.Name, "on node "+node)
	return nil
}

// deletePod deletes d.Pod, only if it is still the pod planned on (UID precondition).
func (r *Reconciler) deletePod(ctx context.Context, job *v1beta1.BroadcastJob, key string, d Deletion, done *podcontrol.Batch) error {
	pod := d.Pod
	r.expectations.ExpectDelete(key, pod.Name, r.Clock.Now())
	err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		r.expectations.Drop(key, pod.Name)
		r.event(job, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting pod %s: %v", pod.Name, err)
		return fmt.Errorf("delete pod %s of BroadcastJob %s: %w", pod.Name, key, err)
	}
	done.Add(ReasonSuccessfulDelete, "deleted", pod.Name, d.Why)
	return nil
}

func (r *Reconciler) event(job *v1beta1.BroadcastJob, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(job, nil, typ, reason, reason, format, args...)
	}
}
