package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/controller/daemonset"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/updateorder"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// DaemonSetKind is the Advanced DaemonSet (daemonsets.apps.kruise.io), by its CRD's short names
// daemon and ads or its full resource name. The plain "daemonset", "daemonsets" and "ds" name the
// apps/v1 DaemonSet in kubectl, so they are refused naming the Advanced DaemonSet's form.
var DaemonSetKind = &Kind{Noun: "advanced daemonset", Resource: "daemonset.apps.kruise.io", gk: schema.GroupKind{Group: kruiseGroup, Kind: "DaemonSet"},
	names: []string{"daemon", "ads", "advanceddaemonset", "advanceddaemonsets", "daemonset.apps.kruise.io", "daemonsets.apps.kruise.io"},
	new:   newDaemonSetWorkload}

// daemonSetWorkload is an Advanced DaemonSet as the commands see it.
type daemonSetWorkload struct{ ds *v1beta1.DaemonSet }

func newDaemonSetWorkload() workload { return daemonSetWorkload{&v1beta1.DaemonSet{}} }

func (w daemonSetWorkload) object() client.Object             { return w.ds }
func (daemonSetWorkload) kind() *Kind                         { return DaemonSetKind }
func (w daemonSetWorkload) status() (string, bool, error)     { return DaemonSetStatus(w.ds) }
func (w daemonSetWorkload) template() *corev1.PodTemplateSpec { return &w.ds.Spec.Template }
func (w daemonSetWorkload) selector() *metav1.LabelSelector   { return w.ds.Spec.Selector }

// revisions: an Advanced DaemonSet records its update revision only (pods of older revisions may
// run several), and by its hash, as OpenKruise does: the revision's name is the daemon set's name,
// a dash and the hash.
func (w daemonSetWorkload) revisions() (string, string) {
	update := w.ds.Status.UpdateRevision
	if update != "" && !strings.Contains(update, "-") { // a hash, not a revision name
		update = w.ds.Name + "-" + update
	}
	return "", update
}

// onDelete reports whether the daemon set updates its pods only when they are deleted.
func (w daemonSetWorkload) onDelete() bool {
	return w.ds.Spec.UpdateStrategy.Type == v1beta1.DaemonSetOnDeleteStrategyType
}

// pausePatch sets rollingUpdate.paused, which an OnDelete daemon set does not have.
func (w daemonSetWorkload) pausePatch(pause bool) (string, error) {
	if w.onDelete() {
		return "", fmt.Errorf("advanced daemonset %q updates OnDelete: it has no rolling update to pause or resume", w.ds.Name)
	}
	return fmt.Sprintf(`{"spec":{"updateStrategy":{"rollingUpdate":{"paused":%t}}}}`, pause), nil
}

// restart stamps inplace.RestartedAtAnnotation on the pod template, as kubectl does: the new
// revision cannot be reached in place (the annotation asks for new pods), so the controller
// recreates the pods node by node, within maxUnavailable (or maxSurge), leaving the partition's and
// the nodes rollingUpdate.selector does not match alone.
func (w daemonSetWorkload) restart(ctx context.Context, c client.Client, out io.Writer, _ restartOptions) error {
	before := w.ds.DeepCopy()
	tpl := w.template()
	if tpl.Annotations == nil {
		tpl.Annotations = map[string]string{}
	}
	tpl.Annotations[inplace.RestartedAtAnnotation] = time.Now().Format(time.RFC3339)
	if err := c.Patch(ctx, w.ds, client.MergeFrom(before)); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s restarted\n", ref(w))
	if w.onDelete() {
		fmt.Fprintln(out, "updateStrategy OnDelete: each pod restarts when it is deleted")
		return nil
	}
	if ru := w.ds.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ptr.Deref(ru.Paused, false) {
			fmt.Fprintln(out, "the rollout is paused: the pods restart once it is resumed")
		}
		if p := updateorder.Partition(ru.Partition, int(w.ds.Status.DesiredNumberScheduled)); p > 0 {
			fmt.Fprintf(out, "partition %d: as many pods keep running unrestarted\n", p)
		}
		if ru.Selector != nil {
			fmt.Fprintln(out, "rollingUpdate.selector: only the pods on the nodes it matches restart")
		}
	}
	fmt.Fprintln(out, "the pods are recreated node by node (a rolling update, within maxUnavailable or maxSurge)")
	return nil
}

// forecast reads the daemon set's nodes, pods and revisions as the controller does and runs its
// planner forward (forecastDaemonSet).
func (w daemonSetWorkload) forecast(ctx context.Context, c client.Client, now time.Time, o planOptions) (*forecast, error) {
	opts := planInPlace
	opts.ShortRevisionHash = true // daemon pods carry the revision's hash
	r := &daemonset.Reconciler{Base: workloadloop.Base{Client: c, Engine: engine.New(c, nil, opts)}}
	snap, err := r.Snapshot(ctx, w.ds)
	if err != nil {
		return nil, err
	}
	pods := 0
	for _, n := range snap.Nodes {
		pods += len(n.Pods)
	}
	return &forecast{header: fmt.Sprintf("advanced daemonset %q: update revision %s, %d nodes, %d pods", w.ds.Name,
		snap.UpdateRevision, len(snap.Nodes), pods), steps: forecastDaemonSet(snap, now, o.steps)}, nil
}

// DaemonSetStatus describes ds's rollout in one line; done when the spec is observed and, on the
// nodes that should run a daemon pod, every pod above the partition runs the update revision and
// every pod is available (status.updatedNumberScheduled ≥ desired − partition, numberAvailable ≥
// desired). An OnDelete daemon set has no rollout to watch, nor has one limited by
// rollingUpdate.selector (its status does not say how many nodes the selector matches): an error
// says so.
func DaemonSetStatus(ds *v1beta1.DaemonSet) (string, bool, error) {
	name := ds.Name
	us := ds.Spec.UpdateStrategy
	if us.Type == v1beta1.DaemonSetOnDeleteStrategyType {
		return "", true, fmt.Errorf("advanced daemonset %q updates OnDelete: a pod moves to the update revision only when it is deleted, "+
			"so there is no rollout to watch", name)
	}
	if ds.Status.ObservedGeneration < ds.Generation {
		return fmt.Sprintf("Waiting for advanced daemonset %q spec update to be observed...", name), false, nil
	}
	st := ds.Status
	want := max(st.DesiredNumberScheduled, 0)
	partition, paused := int32(0), ""
	if ru := us.RollingUpdate; ru != nil {
		partition = int32(updateorder.Partition(ru.Partition, int(want)))
		if ptr.Deref(ru.Paused, false) {
			paused = " (paused)"
		}
		if ru.Selector != nil {
			return fmt.Sprintf("advanced daemonset %q: %d of %d pods updated, %d available%s", name, st.UpdatedNumberScheduled, want,
					st.NumberAvailable, paused), true,
				fmt.Errorf("advanced daemonset %q updates only the nodes rollingUpdate.selector matches, which its status does not count: "+
					"there is no end of the rollout to watch for (see kubectl get pods -L %s)", name, "controller-revision-hash")
		}
	}
	target := want - partition
	switch {
	case st.UpdatedNumberScheduled < target:
		return fmt.Sprintf("Waiting for advanced daemonset %q rollout to finish: %d of %d pods updated, %d available%s...",
			name, st.UpdatedNumberScheduled, target, st.NumberAvailable, paused), false, nil
	case st.NumberAvailable < want:
		return fmt.Sprintf("Waiting for advanced daemonset %q rollout to finish: %d of %d pods available...",
			name, st.NumberAvailable, want), false, nil
	case partition > 0:
		return fmt.Sprintf("advanced daemonset %q partitioned rollout done: %d of %d pods updated (partition %d: the other pods keep "+
			"their revision)", name, target, want, partition), true, nil
	}
	return fmt.Sprintf("advanced daemonset %q successfully rolled out", name), true, nil
}
