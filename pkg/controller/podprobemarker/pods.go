package podprobemarker

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/proberules"
)

// Event reasons on a pod whose probe state turned (OpenKruise's).
const (
	EventProbeSucceeded = "KruiseProbeSucceeded"
	EventProbeFailed    = "KruiseProbeFailed"
)

// Pods writes onto each probed pod what its probes' states mean (proberules.PodMarks): labels and
// annotations by one metadata patch, conditions by one status patch, each only when it changes.
type Pods struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// Reconcile marks pod req from its entry in its node's NodePodProbe status.
func (r *Pods) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !proberules.Eligible(pod) {
		return ctrl.Result{}, nil
	}
	npp := &v1alpha1.NodePodProbe{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, npp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	st := proberules.StatusOf(npp.Status, pod)
	if st == nil {
		return ctrl.Result{}, nil
	}
	all, err := markersIn(ctx, r.Client, pod.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	byName := map[string]*v1alpha1.PodProbeMarker{}
	for _, m := range all {
		byName[m.Name] = m
	}
	marks := proberules.PodMarks(st.ProbeStates, byName)
	labels, annotations := proberules.MetadataChanges(pod, marks)
	conditions := proberules.ConditionChanges(pod, marks)
	if len(labels)+len(annotations) > 0 {
		meta := map[string]any{}
		if len(labels) > 0 {
			meta["labels"] = labels
		}
		if len(annotations) > 0 {
			meta["annotations"] = annotations
		}
		if err := r.patch(ctx, pod, false, map[string]any{"metadata": meta}); err != nil {
			return ctrl.Result{}, err
		}
	}
	if len(conditions) > 0 {
		if err := r.patch(ctx, pod, true, map[string]any{"status": map[string]any{"conditions": conditions}}); err != nil {
			return ctrl.Result{}, err
		}
	}
	if len(labels)+len(annotations)+len(conditions) > 0 {
		r.record(pod, st.ProbeStates, marks)
	}
	return ctrl.Result{}, nil
}

// patch applies body to pod (its status when status), under pod's UID: a merge patch for metadata
// (null removes a key), a strategic one for conditions (merged by type).
func (r *Pods) patch(ctx context.Context, pod *corev1.Pod, status bool, body map[string]any) error {
	meta, _ := body["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		body["metadata"] = meta
	}
	meta["uid"] = string(pod.UID)
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	target := &corev1.Pod{}
	target.Namespace, target.Name = pod.Namespace, pod.Name
	if status {
		err = r.Client.Status().Patch(ctx, target, client.RawPatch(types.StrategicMergePatchType, raw))
	} else {
		err = r.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, raw))
	}
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // the pod is gone (or replaced): nothing to mark
	}
	if err != nil {
		return fmt.Errorf("mark pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// record adds one event per probe whose state the pod now reflects.
func (r *Pods) record(pod *corev1.Pod, states []v1alpha1.NodePodProbeContainerProbeState, marks proberules.Marks) {
	if r.Recorder == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(marks.States)) {
		i := slices.IndexFunc(states, func(s v1alpha1.NodePodProbeContainerProbeState) bool { return s.Name == name })
		reason := EventProbeFailed
		if marks.States[name] == v1alpha1.PodProbeMarkerStateSucceeded {
			reason = EventProbeSucceeded
		}
		msg := strings.TrimSpace(states[i].Message)
		r.Recorder.Eventf(pod, nil, corev1.EventTypeNormal, reason, "Probe", "probe %s: %s %s", name, marks.States[name], msg)
	}
}

// ofPod maps a pod event to itself when a marker of its namespace selects it.
func (r *Pods) ofPod(ctx context.Context, o client.Object) []reconcile.Request {
	pod := o.(*corev1.Pod)
	if pod.Spec.NodeName == "" || len(selecting(ctx, r.Client, pod)) == 0 {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}}}
}

// ofMarker maps a marker event to the pods it selects (its policies may have changed).
func (r *Pods) ofMarker(ctx context.Context, o client.Object) []reconcile.Request {
	pods, err := matchedPods(ctx, r.Client, o.(*v1alpha1.PodProbeMarker))
	if err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(pods))
	for _, p := range pods {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
	}
	return out
}
