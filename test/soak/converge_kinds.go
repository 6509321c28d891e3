package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
)

// Convergence of the kinds that place pods (kinds.go), of who controls each pod, and of the pods
// the driver released.

// nodeZones is the zone of each kwok node, by name (nodes in name order).
func nodeZones(nodes []string) map[string]string {
	out := map[string]string{}
	for i, n := range nodes {
		out[n] = zoneOfNode(i)
	}
	return out
}

// notOwned says why pod is not controlled by w (of UID uid): every pod, orphaned ones included,
// must be adopted by then; ud's by a CloneSet of one of its subsets.
func notOwned(pod *corev1.Pod, w workload, uid types.UID) string {
	ref := metav1.GetControllerOf(pod)
	switch {
	case ref == nil:
		return fmt.Sprintf("pod %s has no controller", pod.Name)
	case w.Kind == "UnitedDeployment":
		if ref.Kind != "CloneSet" || !strings.HasPrefix(ref.Name, w.Name+"-"+pod.Labels[subsetLabel]+"-") {
			return fmt.Sprintf("pod %s of subset %q is controlled by %s %s", pod.Name, pod.Labels[subsetLabel], ref.Kind, ref.Name)
		}
	case ref.UID != uid:
		return fmt.Sprintf("pod %s is controlled by %s %s (uid %s), not %s %s (uid %s)", pod.Name, ref.Kind, ref.Name, ref.UID, w.Kind, w.Name, uid)
	}
	return ""
}

// udNotConverged says why the UnitedDeployment's subsets do not agree with its pods (all live,
// ready, at their image): each subset has one CloneSet, the pods its share of the replicas
// (udSplit) on nodes of its zone, at the UnitedDeployment's update revision, and the status says so.
func udNotConverged(ctx context.Context, c client.Client, pods []corev1.Pod, nodes []string) (string, error) {
	ud := &appsv1alpha1.UnitedDeployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: udName}, ud); err != nil {
		return "", err
	}
	sets := &appsv1alpha1.CloneSetList{}
	if err := c.List(ctx, sets, client.InNamespace(ns), client.MatchingLabels(labelsOf(udName))); err != nil {
		return "", err
	}
	bySubset := map[string]int{}
	for _, s := range sets.Items {
		if ref := metav1.GetControllerOf(&s); ref != nil && ref.UID == ud.UID && s.DeletionTimestamp == nil {
			bySubset[s.Labels[subsetLabel]]++
		}
	}
	zoneOf := nodeZones(nodes)
	perSubset := map[string]int32{}
	var rev string
	if ud.Status.UpdateStatus != nil {
		rev = ud.Status.UpdateStatus.UpdatedRevision
	}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		subset := p.Labels[subsetLabel]
		perSubset[subset]++
		if zoneOf[p.Spec.NodeName] != subset {
			return fmt.Sprintf("pod %s of subset %q runs on node %s of zone %q", p.Name, subset, p.Spec.NodeName, zoneOf[p.Spec.NodeName]), nil
		}
		if p.Labels[udRevisionLabel] != rev {
			return fmt.Sprintf("pod %s at revision %s, want %s", p.Name, p.Labels[udRevisionLabel], rev), nil
		}
	}
	want := udSplit(*ud.Spec.Replicas)
	for _, z := range zones {
		switch {
		case bySubset[z] != 1:
			return fmt.Sprintf("subset %s has %d CloneSets", z, bySubset[z]), nil
		case perSubset[z] != want[z]:
			return fmt.Sprintf("subset %s has %d pods, want %d of %d replicas", z, perSubset[z], want[z], *ud.Spec.Replicas), nil
		case ud.Status.SubsetReplicas[z] != want[z]:
			return fmt.Sprintf("status says subset %s has %d replicas, want %d", z, ud.Status.SubsetReplicas[z], want[z]), nil
		}
	}
	return "", nil
}

// spreadNotConverged says why the WorkloadSpread does not agree with api's pods: every pod placed,
// on a node of its subset's zone, subset a within its maxReplicas, and each subset's status
// counting its pods with nothing pending.
func spreadNotConverged(ctx context.Context, c client.Client, cs kubernetes.Interface, nodes []string) (string, error) {
	ws := &appsv1alpha1.WorkloadSpread{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: spreadName}, ws); err != nil {
		return "", err
	}
	if ws.Status.ObservedGeneration != ws.Generation {
		return fmt.Sprintf("status of generation %d, spec %d", ws.Status.ObservedGeneration, ws.Generation), nil
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=api"})
	if err != nil {
		return "", err
	}
	zoneOf := nodeZones(nodes)
	count := map[string]int32{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		m := spreadrules.MatchedOf(p)
		if m == nil || m.Name != spreadName {
			return fmt.Sprintf("pod %s is in no subset", p.Name), nil
		}
		if zoneOf[p.Spec.NodeName] != m.Subset {
			return fmt.Sprintf("pod %s of subset %q runs on node %s of zone %q", p.Name, m.Subset, p.Spec.NodeName, zoneOf[p.Spec.NodeName]), nil
		}
		count[m.Subset]++
	}
	if count["a"] > spreadMaxA {
		return fmt.Sprintf("subset a holds %d pods, above its maxReplicas %d", count["a"], spreadMaxA), nil
	}
	want := map[string]int32{"a": spreadMaxA - count["a"], "b": -1}
	for _, st := range ws.Status.SubsetStatuses {
		switch {
		case st.Replicas != count[st.Name]:
			return fmt.Sprintf("status says subset %s has %d replicas, the pods %d", st.Name, st.Replicas, count[st.Name]), nil
		case st.MissingReplicas != want[st.Name]:
			return fmt.Sprintf("status says subset %s misses %d replicas, want %d", st.Name, st.MissingReplicas, want[st.Name]), nil
		case len(st.CreatingPods) > 0 || len(st.DeletingPods) > 0:
			return fmt.Sprintf("status of subset %s still records creating %v, deleting %v", st.Name,
				slices.Sorted(maps.Keys(st.CreatingPods)), slices.Sorted(maps.Keys(st.DeletingPods))), nil
		}
	}
	if len(ws.Status.SubsetStatuses) != len(zones) {
		return fmt.Sprintf("status has %d subsets, want %d", len(ws.Status.SubsetStatuses), len(zones)), nil
	}
	return "", nil
}

// statesNotConverged says why the PersistentPodState does not record db's pods as they run: a
// state for each live pod, its node and that node's zone, and none for another name.
func statesNotConverged(ctx context.Context, c client.Client, cs kubernetes.Interface, nodes []string) (string, error) {
	pps := &appsv1alpha1.PersistentPodState{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ppsName}, pps); err != nil {
		return "", err
	}
	if pps.Status.ObservedGeneration != pps.Generation {
		return fmt.Sprintf("status of generation %d, spec %d", pps.Status.ObservedGeneration, pps.Generation), nil
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=db"})
	if err != nil {
		return "", err
	}
	zoneOf := nodeZones(nodes)
	live := map[string]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		live[p.Name] = true
		st, ok := pps.Status.PodStates[p.Name]
		switch {
		case !ok:
			return fmt.Sprintf("no state recorded for pod %s", p.Name), nil
		case st.NodeName != p.Spec.NodeName || st.NodeTopologyLabels[zoneLabel] != zoneOf[p.Spec.NodeName]:
			return fmt.Sprintf("state of pod %s says node %s, zone %q; it runs on %s, zone %q", p.Name, st.NodeName, st.NodeTopologyLabels[zoneLabel],
				p.Spec.NodeName, zoneOf[p.Spec.NodeName]), nil
		}
	}
	for name := range pps.Status.PodStates {
		if !live[name] {
			return fmt.Sprintf("a state is recorded for %s, which has no pod", name), nil
		}
	}
	return "", nil
}

// releasedNotKept says why a pod the driver released and kept is not as it left it: still there
// (no one deleted it), and controlled by no workload.
func releasedNotKept(ctx context.Context, cs kubernetes.Interface, released []releasedPod) (string, error) {
	for _, r := range released {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, r.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) || (err == nil && p.UID != r.UID):
			return fmt.Sprintf("released pod %s (uid %s) is gone", r.Name, r.UID), nil
		case err != nil:
			return "", err
		case p.DeletionTimestamp != nil:
			return fmt.Sprintf("released pod %s is being deleted", r.Name), nil
		}
		if ref := metav1.GetControllerOf(p); ref != nil {
			return fmt.Sprintf("released pod %s is still controlled by %s %s", r.Name, ref.Kind, ref.Name), nil
		}
	}
	return "", nil
}
