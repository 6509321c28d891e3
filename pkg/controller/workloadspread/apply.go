package workloadspread

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
)

// errConflict is a status write that met the webhook's: the reconcile starts again.
var errConflict = fmt.Errorf("the status changed meanwhile")

// apply carries out a plan: pod metadata first (placements, deletion costs), then the status,
// then the deletion of stuck pods, which the new status (their subset unschedulable) makes the
// webhook place elsewhere.
func (r *Reconciler) apply(ctx context.Context, spread *appsv1alpha1.WorkloadSpread, p *plan) error {
	for _, n := range p.notes {
		r.event(spread, n.typ, n.reason, "%s", n.message)
	}
	for _, a := range p.adopt {
		if err := r.patchPod(ctx, a.pod, a.patch); err != nil {
			return fmt.Errorf("place pod %s into subset %s: %w", a.pod.Name, a.subset, err)
		}
		r.event(spread, corev1.EventTypeNormal, "PodPlaced", "pod %s, running before the spread, placed into subset %s by its node", a.pod.Name, a.subset)
	}
	for pod, cost := range p.costs {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, spreadrules.DeletionCostAnnotation, cost)
		if err := r.patchPod(ctx, pod, []byte(patch)); err != nil {
			return fmt.Errorf("set the deletion cost of pod %s: %w", pod.Name, err)
		}
	}
	if !p.statusValid {
		return nil
	}
	if err := r.writeStatus(ctx, spread, p.status); err != nil {
		return err
	}
	for _, s := range p.sortedStuck() {
		if err := r.Client.Delete(ctx, s.pod, client.Preconditions{UID: &s.pod.UID}); client.IgnoreNotFound(err) != nil {
			r.event(spread, corev1.EventTypeWarning, "DeletePodFailed", "Failed to delete unschedulable Pod %s/%s in Subset %s: %v",
				s.pod.Namespace, s.pod.Name, s.subset, err)
			return fmt.Errorf("delete unschedulable pod %s: %w", s.pod.Name, err)
		}
		log.FromContext(ctx).Info("deleted unschedulable pod", "pod", client.ObjectKeyFromObject(s.pod), "subset", s.subset)
		r.event(spread, corev1.EventTypeNormal, "RescheduledPod", "pod %s could not be scheduled in subset %s: deleted, so that its workload recreates it in another subset",
			s.pod.Name, s.subset)
	}
	return nil
}

func (r *Reconciler) patchPod(ctx context.Context, pod *corev1.Pod, patch []byte) error {
	err := r.Client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// writeStatus writes status when it differs, with the spread's resourceVersion.
func (r *Reconciler) writeStatus(ctx context.Context, spread *appsv1alpha1.WorkloadSpread, status appsv1alpha1.WorkloadSpreadStatus) error {
	if equality.Semantic.DeepEqual(normalize(spread.Status), normalize(status)) {
		return nil
	}
	next := spread.DeepCopy()
	next.Status = status
	err := r.Client.Status().Update(ctx, next)
	switch {
	case apierrors.IsConflict(err):
		return errConflict
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("update the status: %w", err)
	}
	return nil
}

// normalize makes empty maps and absent ones compare equal.
func normalize(s appsv1alpha1.WorkloadSpreadStatus) appsv1alpha1.WorkloadSpreadStatus {
	s = *s.DeepCopy()
	fix := func(list []appsv1alpha1.WorkloadSpreadSubsetStatus) {
		for i := range list {
			if len(list[i].CreatingPods) == 0 {
				list[i].CreatingPods = nil
			}
			if len(list[i].DeletingPods) == 0 {
				list[i].DeletingPods = nil
			}
		}
	}
	fix(s.SubsetStatuses)
	for _, list := range s.VersionedSubsetStatuses {
		fix(list)
	}
	if len(s.VersionedSubsetStatuses) == 0 {
		s.VersionedSubsetStatuses = nil
	}
	return s
}

func (r *Reconciler) event(spread *appsv1alpha1.WorkloadSpread, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(spread, nil, typ, reason, reason, format, args...)
	}
}
