package cloneset

import (
	"context"
	"errors"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// apply carries out the plan through podcontrol, the controller's only writer of pods and
// revisions, in the workloads' one order (workloadloop.Apply); a pod deleted takes its claims along,
// and ownership is settled last.
func (r *Reconciler) apply(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation, plan Plan) ApplyErrors {
	inFlight := obs.inFlight
	inFlight.Resumes = plan.Resumes
	deletes := make([]workloadloop.Deletion, 0, len(plan.Deletes))
	scaleIn := map[string]bool{}
	for _, d := range plan.Deletes {
		deletes = append(deletes, workloadloop.Deletion{Pod: d.Pod, Reason: d.Reason})
		scaleIn[d.Pod] = d.Kind == DeleteScaleIn
	}
	// The plan replaces each pod it deletes but for a scale-in (a specified or prepared deletion, a
	// recreate): a deletion refused (a PodUnavailableBudget) or failed leaves its pod, and its
	// replacement is not made this time -- it would be one pod too many (the soak, seed 23).
	var kept atomic.Int32
	logUnpaidUpdates(ctx, obs.snap, plan)
	changes := make([]podcontrol.Change, 0, len(plan.Updates))
	for _, u := range plan.Updates {
		ch := podcontrol.Change{Pod: obs.pods[u.Pod], Spec: u.Spec, Reason: u.Reason}
		if u.Mode == UpdateRecreate {
			ch.Spec = nil
		}
		changes = append(changes, ch)
	}
	return workloadloop.Apply(ctx, cs, workloadloop.Writes{Control: r.Control(), Owner: r.owner(cs),
		NewRevision: obs.newRevision, Revisions: obs.revisions, Pods: obs.pods, InFlight: inFlight, Lifecycle: plan.Lifecycle,
		Deletes: deletes, Updates: changes, RecreateEvent: recreated,
		// Ownership is settled last, but pods to adopt may be the orphans of this very CloneSet,
		// deleted with propagation Orphan while the cache still holds it.
		AdoptsLater: len(obs.adopt) > 0,
		Delete: func(pod *corev1.Pod, ev podcontrol.Deletion, why string, done *podcontrol.Batch) error {
			err := r.deletePod(ctx, cs, obs, pod, ev, why, done)
			if err != nil && pod != nil && !scaleIn[pod.Name] {
				kept.Add(1)
			}
			return err
		},
		Create: func(done *podcontrol.Batch) error {
			creates := plan.Creates[:max(0, len(plan.Creates)-int(kept.Load()))]
			return podcontrol.SlowStart(creates, func(c Creation) error { return r.createPod(ctx, cs, obs, c, done) })
		},
		Finish: func(done *podcontrol.Batch) error {
			return errors.Join(podcontrol.Parallel(plan.ReleaseInstanceIDs, func(id string) error {
				return r.deleteClaims(ctx, cs, obs.claims[id], "scaleStrategy.disablePVCReuse: no pod has instance "+id, done)
			}), r.applyOwnership(ctx, cs, obs, done))
		},
		Prune: func() { r.pruneRevisions(ctx, cs, obs) },
	})
}

// owner is cs as the owner of podcontrol's writes.
func (r *Reconciler) owner(cs *v1alpha1.CloneSet) podcontrol.Owner {
	o := podcontrol.Owner{Object: cs, GVK: gvk, Lifecycle: cs.Spec.Lifecycle, PreparingNormal: true, Updating: true, Metrics: workload(cs.Namespace, cs.Name)}
	if ips := cs.Spec.UpdateStrategy.InPlaceUpdateStrategy; ips != nil {
		o.GraceSeconds = ips.GracePeriodSeconds
	}
	return o
}

// createPod creates a pod of the given revision, named and labelled with a fresh instance ID (or
// the one the plan reuses), with its PVCs.
func (r *Reconciler) createPod(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation, c Creation, done *podcontrol.Batch) error {
	id := c.InstanceID
	if id == "" {
		id = utilrand.String(5)
	}
	pod, err := workloadloop.NewPod(obs.revisions, c.Revision)
	if err != nil {
		return err
	}
	pod.Name, pod.Namespace = cs.Name+"-"+id, cs.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[v1alpha1.CloneSetInstanceIDLabelKey] = id
	if err := r.ensureClaims(ctx, cs, pod, id); err != nil {
		r.event(cs, corev1.EventTypeWarning, "FailedCreate", "create the PVCs of pod %s: %v", pod.Name, err)
		return err
	}
	return r.Control().Create(ctx, r.owner(cs), pod, c.Revision, c.Reason, done)
}

// recreated is the event of a CloneSet's recreating update, OpenKruise's SuccessfulUpdatePodReCreate.
var recreated = podcontrol.Deletion{Reason: "SuccessfulUpdatePodReCreate", Verb: "recreated"}

// deletePod deletes pod, only if it is still the pod that was planned on. A pod the controller
// deletes takes its PVCs along (a pod deleted by anyone else leaves them for its replacement to
// reuse).
func (r *Reconciler) deletePod(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation, pod *corev1.Pod, ev podcontrol.Deletion, why string, done *podcontrol.Batch) error {
	if pod == nil || pod.DeletionTimestamp != nil {
		return nil
	}
	if err := r.Control().Delete(ctx, r.owner(cs), pod, ev, why, done); err != nil {
		return err
	}
	return r.deleteClaims(ctx, cs, obs.claims[pod.Labels[v1alpha1.CloneSetInstanceIDLabelKey]], "its pod "+pod.Name+" was deleted", done)
}

// pruneRevisions deletes the oldest revisions no pod uses beyond revisionHistoryLimit.
func (r *Reconciler) pruneRevisions(ctx context.Context, cs *v1alpha1.CloneSet, obs *observation) {
	inUse := map[string]bool{obs.snap.CurrentRevision: true, obs.snap.UpdateRevision: true}
	for _, p := range obs.snap.Pods {
		inUse[p.Revision] = true
	}
	r.Control().PruneRevisions(ctx, r.owner(cs), obs.revisions, inUse, ptr.Deref(obs.snap.Spec.RevisionHistoryLimit, 10))
}

func (r *Reconciler) event(cs *v1alpha1.CloneSet, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(cs, nil, typ, reason, reason, format, args...)
	}
}
