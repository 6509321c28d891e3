package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/controller/statefulset"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// statefulSetWorkload is an Advanced StatefulSet as the commands see it.
type statefulSetWorkload struct{ set *v1beta1.StatefulSet }

func newStatefulSetWorkload() workload { return statefulSetWorkload{&v1beta1.StatefulSet{}} }

func (w statefulSetWorkload) object() client.Object             { return w.set }
func (statefulSetWorkload) kind() *Kind                         { return StatefulSetKind }
func (w statefulSetWorkload) status() (string, bool, error)     { return StatefulSetStatus(w.set) }
func (w statefulSetWorkload) template() *corev1.PodTemplateSpec { return &w.set.Spec.Template }
func (w statefulSetWorkload) selector() *metav1.LabelSelector   { return w.set.Spec.Selector }
func (w statefulSetWorkload) revisions() (string, string) {
	return w.set.Status.CurrentRevision, w.set.Status.UpdateRevision
}

// onDelete reports whether the set updates its pods only when they are deleted.
func (w statefulSetWorkload) onDelete() bool {
	return w.set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType
}

// pausePatch sets rollingUpdate.paused, which an OnDelete set does not have.
func (w statefulSetWorkload) pausePatch(pause bool) (string, error) {
	if w.onDelete() {
		return "", fmt.Errorf("advanced statefulset %q updates OnDelete: it has no rolling update to pause or resume", w.set.Name)
	}
	return fmt.Sprintf(`{"spec":{"updateStrategy":{"rollingUpdate":{"paused":%t}}}}`, pause), nil
}

// restart stamps inplace.RestartedAtAnnotation on the pod template, as kubectl does: the new
// revision cannot be reached in place (the annotation asks for new pods), so the controller
// recreates every pod above the partition, by descending ordinal within maxUnavailable.
func (w statefulSetWorkload) restart(ctx context.Context, c client.Client, out io.Writer, _ restartOptions) error {
	if ru := w.set.Spec.UpdateStrategy.RollingUpdate; ru != nil && !w.onDelete() && ru.PodUpdatePolicy == v1beta1.InPlaceOnlyStatefulSetPodUpdatePolicy {
		return fmt.Errorf("advanced statefulset %q has podUpdatePolicy InPlaceOnly, which never recreates a pod: a restart needs new pods", w.set.Name)
	}
	before := w.set.DeepCopy()
	tpl := w.template()
	if tpl.Annotations == nil {
		tpl.Annotations = map[string]string{}
	}
	tpl.Annotations[inplace.RestartedAtAnnotation] = time.Now().Format(time.RFC3339)
	if err := c.Patch(ctx, w.set, client.MergeFrom(before)); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s restarted\n", ref(w))
	ru := w.set.Spec.UpdateStrategy.RollingUpdate
	switch {
	case w.onDelete():
		fmt.Fprintln(out, "updateStrategy OnDelete: each pod restarts when it is deleted")
	case ru != nil && ru.Paused:
		fmt.Fprintln(out, "the rollout is paused: the pods restart once it is resumed")
	}
	if !w.onDelete() {
		fmt.Fprintln(out, "the pods are recreated one after another (a rolling update, within maxUnavailable)")
	}
	return nil
}

// forecast reads the set's pods and revisions as the controller does and runs its planner
// forward (forecastStatefulSet).
func (w statefulSetWorkload) forecast(ctx context.Context, c client.Client, now time.Time, o planOptions) (*forecast, error) {
	r := &statefulset.Reconciler{Base: workloadloop.Base{Client: c, Engine: engine.New(c, nil, planInPlace)}, StartOrdinal: o.startOrdinal}
	snap, err := r.Snapshot(ctx, w.set)
	if err != nil {
		return nil, err
	}
	return &forecast{header: fmt.Sprintf("advanced statefulset %q: update revision %s, current revision %s, %d pods", w.set.Name,
		snap.UpdateRevision, snap.CurrentRevision, len(snap.Pods)), steps: forecastStatefulSet(snap, now, o.steps)}, nil
}

// StatefulSetStatus describes set's rollout in one line; done when the pods from the partition up
// run the update revision and are ready and every replica is available (the pods below
// rollingUpdate.partition keep the current revision). An OnDelete set has no rollout to watch: an
// error says so.
func StatefulSetStatus(set *v1beta1.StatefulSet) (string, bool, error) {
	name := set.Name
	us := set.Spec.UpdateStrategy
	if us.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return "", true, fmt.Errorf("advanced statefulset %q updates OnDelete: a pod moves to the update revision only when it is deleted, "+
			"so there is no rollout to watch", name)
	}
	if set.Status.ObservedGeneration < set.Generation {
		return fmt.Sprintf("Waiting for advanced statefulset %q spec update to be observed...", name), false, nil
	}
	for _, c := range set.Status.Conditions {
		if c.Type == statefulset.ConditionProgressing && c.Reason == statefulset.ReasonProgressDeadlineExceeded {
			return fmt.Sprintf("advanced statefulset %q rollout is stuck: %s", name, c.Message), false, ErrStuck
		}
	}
	want := max(ptr.Deref(set.Spec.Replicas, 1), 0)
	partition, paused := int32(0), ""
	if ru := us.RollingUpdate; ru != nil {
		partition = min(max(ptr.Deref(ru.Partition, 0), 0), want)
		if ru.Paused {
			paused = " (paused)"
		}
	}
	target := want - partition
	st := set.Status
	switch {
	case st.UpdatedReplicas < target:
		return fmt.Sprintf("Waiting for advanced statefulset %q rollout to finish: %d of %d pods updated, %d ready, %d available%s...",
			name, st.UpdatedReplicas, target, st.UpdatedReadyReplicas, st.AvailableReplicas, paused), false, nil
	case st.Replicas > want:
		return fmt.Sprintf("Waiting for advanced statefulset %q rollout to finish: %d pods beyond the replicas are pending termination...",
			name, st.Replicas-want), false, nil
	case st.UpdatedReadyReplicas < target || st.AvailableReplicas < want:
		return fmt.Sprintf("Waiting for advanced statefulset %q rollout to finish: %d of %d updated pods ready, %d of %d available...",
			name, st.UpdatedReadyReplicas, target, st.AvailableReplicas, want), false, nil
	case partition > 0:
		return fmt.Sprintf("advanced statefulset %q partitioned rollout done: %d of %d pods updated (partition %d: the pods below it keep "+
			"the current revision)", name, target, want, partition), true, nil
	}
	return fmt.Sprintf("advanced statefulset %q successfully rolled out", name), true, nil
}
