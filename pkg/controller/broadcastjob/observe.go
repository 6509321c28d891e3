package broadcastjob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// observe reads the nodes (always from the cache) and job's pods from reader: those whose
// controller is job (by the ControllerIndex when indexed, else by appspub.BroadcastJobControllerUIDLabel, then by
// their controller reference).
func (r *Reconciler) observe(ctx context.Context, job *v1beta1.BroadcastJob, reader client.Reader, indexed bool) (Snapshot, error) {
	snap := Snapshot{Job: job}
	nodes := &corev1.NodeList{}
	if err := r.Client.List(ctx, nodes); err != nil {
		return snap, fmt.Errorf("list nodes: %w", err)
	}
	for i := range nodes.Items {
		snap.Nodes = append(snap.Nodes, &nodes.Items[i])
	}
	sel := client.MatchingLabels{appspub.BroadcastJobControllerUIDLabel: string(job.UID)}
	var by client.ListOption = sel
	if indexed {
		by = client.MatchingFields{podcontrol.ControllerIndex: string(job.UID)}
	}
	pods := &corev1.PodList{}
	if err := reader.List(ctx, pods, client.InNamespace(job.Namespace), by); err != nil {
		return snap, fmt.Errorf("list pods: %w", err)
	}
	for i := range pods.Items {
		if ref := metav1.GetControllerOfNoCopy(&pods.Items[i]); ref != nil && ref.UID == job.UID {
			snap.Pods = append(snap.Pods, &pods.Items[i])
		}
	}
	return snap, nil
}

// podsByName keys pods by name, as Expectations does.
func podsByName(pods []*corev1.Pod) map[string]*corev1.Pod {
	out := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		out[p.Name] = p
	}
	return out
}
