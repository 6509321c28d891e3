package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/controller/cloneset"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// cloneSetWorkload is a CloneSet as the commands see it.
type cloneSetWorkload struct{ cs *appsv1alpha1.CloneSet }

func newCloneSetWorkload() workload { return cloneSetWorkload{&appsv1alpha1.CloneSet{}} }

func (w cloneSetWorkload) object() client.Object             { return w.cs }
func (cloneSetWorkload) kind() *Kind                         { return CloneSetKind }
func (w cloneSetWorkload) status() (string, bool, error)     { return Status(w.cs) }
func (w cloneSetWorkload) template() *corev1.PodTemplateSpec { return &w.cs.Spec.Template }
func (w cloneSetWorkload) selector() *metav1.LabelSelector   { return w.cs.Spec.Selector }
func (w cloneSetWorkload) revisions() (string, string) {
	return w.cs.Status.CurrentRevision, w.cs.Status.UpdateRevision
}

func (cloneSetWorkload) pausePatch(pause bool) (string, error) {
	return fmt.Sprintf(`{"spec":{"updateStrategy":{"paused":%t}}}`, pause), nil
}

// restart restarts every pod's containers in place through ContainerRecreateRequests or, with
// o.recreate, has the controller recreate the pods (restartByTemplateEnv).
func (w cloneSetWorkload) restart(ctx context.Context, c client.Client, out io.Writer, o restartOptions) error {
	if o.recreate {
		return restartByTemplateEnv(ctx, c, w.cs, out)
	}
	return restartInPlace(ctx, c, w.cs, out)
}

// forecast reads the CloneSet's pods and revisions as the controller does and runs its planner
// forward (cloneset.Forecast).
func (w cloneSetWorkload) forecast(ctx context.Context, c client.Client, now time.Time, o planOptions) (*forecast, error) {
	r := &cloneset.Reconciler{Base: workloadloop.Base{Client: c, Engine: engine.New(c, nil, planInPlace)}, PartitionRollback: o.partitionRollback}
	snap, err := r.Snapshot(ctx, w.cs)
	if err != nil {
		return nil, err
	}
	f := &forecast{header: fmt.Sprintf("cloneset %q: update revision %s, current revision %s, %d pods", w.cs.Name, snap.UpdateRevision,
		snap.CurrentRevision, len(snap.Pods))}
	for _, st := range cloneset.Forecast(snap, now, cloneset.Options{PartitionRollback: o.partitionRollback}, o.steps) {
		step := forecastStep{waits: st.Waits}
		for _, u := range st.Updates {
			how := "in place"
			if u.Mode == cloneset.UpdateRecreate {
				how = "recreate"
			}
			step.actions = append(step.actions, forecastAction{how, fmt.Sprintf("%s (%s → %s): %s", u.Pod, u.From, u.To, u.Reason)})
		}
		for _, cr := range st.Creates {
			step.actions = append(step.actions, forecastAction{"create", fmt.Sprintf("a pod at %s: %s", cr.Revision, cr.Reason)})
		}
		for _, d := range st.Deletes {
			step.actions = append(step.actions, forecastAction{"delete", fmt.Sprintf("%s: %s", d.Pod, d.Reason)})
		}
		f.steps = append(f.steps, step)
	}
	return f, nil
}

// Status describes cs's rollout in one line; done when every pod is updated and available (or the
// partition holds the rest); ErrStuck when its progress deadline passed.
func Status(cs *appsv1alpha1.CloneSet) (string, bool, error) {
	name := cs.Name
	if cs.Status.ObservedGeneration < cs.Generation {
		return fmt.Sprintf("Waiting for cloneset %q spec update to be observed...", name), false, nil
	}
	for _, c := range cs.Status.Conditions {
		if c.Type == appsv1alpha1.CloneSetConditionProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return fmt.Sprintf("cloneset %q rollout is stuck: %s", name, c.Message), false, ErrStuck
		}
	}
	b := cloneset.ComputeBounds(&cs.Spec) // the controller's own reading of replicas and partition
	want, partition, target := int32(b.Replicas), int32(b.Partition), int32(b.ExpectedUpdated)
	st := cs.Status
	paused := ""
	if cs.Spec.UpdateStrategy.Paused {
		paused = " (paused)"
	}
	switch {
	case st.UpdatedReplicas < target:
		return fmt.Sprintf("Waiting for cloneset %q rollout to finish: %d of %d pods updated, %d ready, %d available%s...",
			name, st.UpdatedReplicas, target, st.UpdatedReadyReplicas, st.AvailableReplicas, paused), false, nil
	case st.Replicas > want:
		return fmt.Sprintf("Waiting for cloneset %q rollout to finish: %d old pods are pending termination...", name, st.Replicas-want), false, nil
	case st.UpdatedReadyReplicas < target || st.AvailableReplicas < want:
		return fmt.Sprintf("Waiting for cloneset %q rollout to finish: %d of %d updated pods ready, %d of %d available...",
			name, st.UpdatedReadyReplicas, target, st.AvailableReplicas, want), false, nil
	case partition > 0:
		return fmt.Sprintf("cloneset %q partitioned rollout done: %d of %d pods updated (partition %d)", name, target, want, partition), true, nil
	}
	return fmt.Sprintf("cloneset %q successfully rolled out", name), true, nil
}
