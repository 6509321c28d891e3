package ephemeraljob

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// OpenKruiseFinalizer is the finalizer OpenKruise v1.9.0 puts on every EphemeralJob; Kruise does
// not add it (an ephemeral container cannot be removed from a pod, so there is nothing to clean
// up) and takes it off a job being deleted, so that jobs taken over from OpenKruise go.
const OpenKruiseFinalizer = "apps.kruise.io/ephemeralcontainers-cleanup"

// Event reasons. CreateFailed is OpenKruise's.
const (
	EventInjected     = "Injected"
	EventCreateFailed = "CreateFailed"
	EventConflict     = "ContainerNameConflict"
)

// apply carries plan out on job: injections, the status when it changed, events, the deletion at
// the TTL.
func (r *Reconciler) apply(ctx context.Context, job *v1alpha1.EphemeralJob, plan Plan) error {
	key := job.Namespace + "/" + job.Name
	var errs []error
	for _, pod := range plan.Inject {
		if err := r.inject(ctx, job, pod); err != nil {
			errs = append(errs, err)
			r.event(job, pod, corev1.EventTypeWarning, EventCreateFailed, "Inject", "failed to create ephemeral containers in pod %s: %v", pod.Name, err)
			continue
		}
		r.pending.add(key, pod.UID, r.Clock.Now())
		r.event(job, pod, corev1.EventTypeNormal, EventInjected, "Inject", "created ephemeral containers %s in pod %s", names(job), pod.Name)
	}
	for _, c := range plan.Conflicts {
		if r.pending.firstConflict(key, c.UID) {
			ref := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: c.Pod, UID: c.UID}}
			r.event(job, ref, corev1.EventTypeWarning, EventConflict, "Select", "%s: it is not a target", c)
		}
	}
	if !equality.Semantic.DeepEqual(job.Status, plan.Status) {
		updated := job.DeepCopy()
		updated.Status = plan.Status
		if err := r.Client.Status().Update(ctx, updated); err != nil {
			return errors.Join(append(errs, fmt.Errorf("update the status of EphemeralJob %s: %w", key, err))...)
		}
		if c := plan.Finished; c != nil {
			typ := corev1.EventTypeNormal
			if plan.Status.Phase != v1alpha1.EphemeralJobSucceeded {
				typ = corev1.EventTypeWarning
			}
			r.event(job, nil, typ, c.Reason, "Finish", "%s", c.Message)
		}
	}
	if plan.Delete {
		ctrl.LoggerFrom(ctx).Info("deleting EphemeralJob after ttlSecondsAfterFinished", "ephemeralJob", klog.KObj(job))
		if err := r.Client.Delete(ctx, job, client.Preconditions{UID: &job.UID}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete EphemeralJob %s after its ttlSecondsAfterFinished: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

// inject adds the job's containers, each marked with env KRUISE_EJOB_ID, to pod through the
// pods/ephemeralcontainers subresource; the pod's resourceVersion guards against a stale cache.
func (r *Reconciler) inject(ctx context.Context, job *v1alpha1.EphemeralJob, pod *corev1.Pod) error {
	updated := pod.DeepCopy()
	for _, c := range job.Spec.Template.EphemeralContainers {
		c := *c.DeepCopy()
		c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == v1alpha1.EphemeralContainerEnvKey })
		c.Env = append(c.Env, corev1.EnvVar{Name: v1alpha1.EphemeralContainerEnvKey, Value: string(job.UID)})
		updated.Spec.EphemeralContainers = append(updated.Spec.EphemeralContainers, c)
	}
	return r.Client.SubResource("ephemeralcontainers").Update(ctx, updated)
}

// releaseFinalizer takes OpenKruise's finalizer off a job being deleted.
func (r *Reconciler) releaseFinalizer(ctx context.Context, job *v1alpha1.EphemeralJob) error {
	if !slices.Contains(job.Finalizers, OpenKruiseFinalizer) {
		return nil
	}
	updated := job.DeepCopy()
	updated.Finalizers = slices.DeleteFunc(updated.Finalizers, func(f string) bool { return f == OpenKruiseFinalizer })
	if err := r.Client.Patch(ctx, updated, client.MergeFromWithOptions(job, client.MergeFromWithOptimisticLock{})); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("remove finalizer %s from EphemeralJob %s/%s: %w", OpenKruiseFinalizer, job.Namespace, job.Name, err))
	}
	return nil
}

// names lists the job's container names.
func names(job *v1alpha1.EphemeralJob) string {
	var out []string
	for _, c := range job.Spec.Template.EphemeralContainers {
		out = append(out, c.Name)
	}
	return fmt.Sprint(out)
}

// event records an event on the job, about the related pod if any, when a recorder is set.
func (r *Reconciler) event(job *v1alpha1.EphemeralJob, related *corev1.Pod, typ, reason, action, note string, args ...any) {
	if r.Recorder == nil {
		return
	}
	var rel runtime.Object
	if related != nil {
		rel = related
	}
	r.Recorder.Eventf(job, rel, typ, reason, action, note, args...)
}
