package daemonset

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/rolloutmetrics"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// ReasonFailedDaemonPod is the Warning event of a failed daemon pod, deleted to be replaced.
const ReasonFailedDaemonPod = "FailedDaemonPod"

// ApplyErrors are the errors of one apply, by kind: Scale for creates and deletes, Update for
// updates.
type ApplyErrors = workloadloop.Errors

// apply carries out the plan through podcontrol, the controller's only writer of pods and
// revisions, in the workloads' one order (workloadloop.Apply); a failed pod's deletion spaces the
// next replacement on its node (backoff).
func (r *Reconciler) apply(ctx context.Context, ds *v1beta1.DaemonSet, obs *observation, plan Plan) ApplyErrors {
	inFlight := obs.inFlight
	inFlight.Resumes = plan.Resumes
	now := r.Clock.Now()
	deletes := make([]workloadloop.Deletion, 0, len(plan.Deletes))
	for _, d := range plan.Deletes {
		if d.Failed {
			r.backoff.Next(backoffKey(ds, d.Node), now)
			// OpenKruise's (and the DaemonSet controller's) Warning for a daemon pod that failed.
			r.Control().Event(r.owner(ds), corev1.EventTypeWarning, ReasonFailedDaemonPod,
				"found failed daemon pod %s/%s on node %s: it is deleted and replaced", ds.Namespace, d.Pod, d.Node)
		}
		deletes = append(deletes, workloadloop.Deletion{Pod: d.Pod, Reason: d.Reason})
	}
	changes := make([]podcontrol.Change, 0, len(plan.Updates))
	for _, u := range plan.Updates {
		changes = append(changes, podcontrol.Change{Pod: obs.pods[u.Pod], Spec: u.Spec, Reason: u.Reason})
	}
	return workloadloop.Apply(ctx, ds, workloadloop.Writes{Control: r.Control(), Owner: r.owner(ds),
		NewRevision: obs.newRevision, Revisions: obs.revisions, Adopt: obs.adopt, Release: obs.release,
		Pods: obs.pods, InFlight: inFlight, Lifecycle: plan.Lifecycle, Deletes: deletes, Updates: changes,
		Create: func(done *podcontrol.Batch) error {
			return podcontrol.SlowStart(plan.Creates, func(c Creation) error { return r.createPod(ctx, ds, obs, c, done) })
		},
		Prune: func() { r.pruneRevisions(ctx, ds, obs) },
	})
}

// owner is set as the owner of podcontrol's writes.
func (r *Reconciler) owner(ds *v1beta1.DaemonSet) podcontrol.Owner {
	return podcontrol.Owner{Object: ds, GVK: gvk, Lifecycle: ds.Spec.Lifecycle, Metrics: workload(ds.Namespace, ds.Name)}
}

func workload(namespace, name string) rolloutmetrics.Workload {
	return rolloutmetrics.Workload{Kind: "DaemonSet", Namespace: namespace, Name: name}
}

// createPod creates the daemon pod of a node from its revision, as the DaemonSet controller makes
// it: named <set>-<5 random characters>, with the daemon pod tolerations, and its required node
// affinity replaced by the node's name (the scheduler binds it there).
func (r *Reconciler) createPod(ctx context.Context, ds *v1beta1.DaemonSet, obs *observation, c Creation, done *podcontrol.Batch) error {
	pod, err := workloadloop.NewPod(obs.revisions, c.Revision)
	if err != nil {
		return err
	}
	pod.GenerateName, pod.Namespace = ds.Name+"-", ds.Namespace
	pod.Name = pod.GenerateName + rand.String(5)
	pod.Labels = maps.Clone(pod.Labels)
	pod.Spec.Tolerations = nodeeligibility.DaemonTolerations(&pod.Spec)
	pod.Spec.Affinity = nodeeligibility.PinToNode(pod.Spec.Affinity, c.Node)
	return r.Control().Create(ctx, r.owner(ds), pod, c.Revision, c.Reason, done)
}

// pruneRevisions deletes the oldest revisions no pod uses beyond revisionHistoryLimit.
func (r *Reconciler) pruneRevisions(ctx context.Context, ds *v1beta1.DaemonSet, obs *observation) {
	inUse := map[string]bool{obs.snap.UpdateRevision: true}
	for _, n := range obs.snap.Nodes {
		for _, p := range n.Pods {
			inUse[p.Revision] = true
		}
	}
	r.Control().PruneRevisions(ctx, r.owner(ds), obs.revisions, inUse, ptr.Deref(obs.snap.Spec.RevisionHistoryLimit, 10))
}
