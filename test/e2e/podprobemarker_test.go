package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/controller/podprobemarker"
	"github.com/kruise-ng/kruise/pkg/core/proberules"
	"github.com/kruise-ng/kruise/test/harness"
)

// probedPod is a pod labelled app=app pinned to node, with a container "main" declaring port
// "http" (8080).
func probedPod(t *testing.T, ns, name, app, node string) *corev1.Pod {
	t.Helper()
	spec := podSpec("registry.example/game:v1")
	spec.NodeName = node
	spec.Tolerations = []corev1.Toleration{{Key: privateTaint, Operator: corev1.TolerationOpExists}}
	spec.Containers[0].Name = "main"
	spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	p, err := cs.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// nodePodProbe is the NodePodProbe of node, nil when there is none.
func nodePodProbe(t *testing.T, c client.Client, node string) *appsv1alpha1.NodePodProbe {
	t.Helper()
	npp := &appsv1alpha1.NodePodProbe{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: node}, npp); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	return npp
}

// reportStates writes the states of node's NodePodProbe as kruise-daemon does: pod → probe → state.
func reportStates(t *testing.T, c client.Client, node string, pods map[*corev1.Pod]map[string]appsv1alpha1.PodProbeMarkerState) {
	t.Helper()
	var status appsv1alpha1.NodePodProbeStatus
	now := metav1.Now().Rfc3339Copy()
	for p, probes := range pods {
		ps := appsv1alpha1.NodePodProbePodStatus{Name: p.Name, Namespace: p.Namespace, UID: string(p.UID)}
		for name, st := range probes {
			ps.ProbeStates = append(ps.ProbeStates, appsv1alpha1.NodePodProbeContainerProbeState{Name: name, State: st,
				Message: "reported by the test", LastProbeTime: now, LastTransitionTime: now})
		}
		status.PodProbeStatuses = append(status.PodProbeStatuses, ps)
	}
	raw, _ := json.Marshal(map[string]any{"status": status})
	if err := c.Status().Patch(context.Background(), &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}},
		client.RawPatch(types.MergePatchType, raw)); err != nil {
		t.Fatal(err)
	}
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// TestPodProbeMarker: the manager keeps a NodePodProbe per node (with the node), lists there the
// probes of the pods a marker selects (named ports resolved), turns the states kruise-daemon
// reports (written here by the test: kwok nodes run no daemon) into the pods' condition, labels and
// annotations (the opposite policy's removed), prunes gone pods, counts matched pods, and lets a
// deleted marker go once its probes left every NodePodProbe. Invalid markers are refused.
func TestPodProbeMarker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	nodes := privateNodes(t, ns, 2)
	harness.Eventually(t, 30*time.Second, "a NodePodProbe for each new node", func() (bool, string) {
		return nodePodProbe(t, c, nodes[0]) != nil && nodePodProbe(t, c, nodes[1]) != nil, ""
	})
	a, b := probedPod(t, ns, "a", "game", nodes[0]), probedPod(t, ns, "b", "game", nodes[0])
	probedPod(t, ns, "c", "game", nodes[1])
	probedPod(t, ns, "other", "web", nodes[0])
	const cond = "game.example.com/idle"
	ppm := &appsv1alpha1.PodProbeMarker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "game"},
		Spec: appsv1alpha1.PodProbeMarkerSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "game"}},
			Probes: []appsv1alpha1.PodProbeMarkerProbe{
				{Name: "idle", ContainerName: "main", PodConditionType: cond,
					Probe: appsv1alpha1.PodProbeMarkerProbeSpec{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/idle"}}},
					MarkerPolicy: []appsv1alpha1.PodProbeMarkerPolicy{
						{State: appsv1alpha1.PodProbeMarkerStateSucceeded, Labels: map[string]string{"idle": "true"},
							Annotations: map[string]string{"controller.kubernetes.io/pod-deletion-cost": "-10"}},
						{State: appsv1alpha1.PodProbeMarkerStateFailed, Labels: map[string]string{"idle": "false"}}}},
				{Name: "web", ContainerName: "main", PodConditionType: "game.example.com/web",
					Probe: appsv1alpha1.PodProbeMarkerProbeSpec{HTTPGet: &appsv1alpha1.PodProbeMarkerHTTPGetAction{Path: "/", Port: intstr.FromString("http")}}},
			}}}
	if err := c.Create(ctx, ppm); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, time.Minute, "the pods' probes listed in their nodes' NodePodProbes, and the marker's status", func() (bool, string) {
		m := &appsv1alpha1.PodProbeMarker{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ppm), m); err != nil {
			return false, err.Error()
		}
		n0, n1 := nodePodProbe(t, c, nodes[0]), nodePodProbe(t, c, nodes[1])
		ok := len(n0.Spec.PodProbes) == 2 && len(n1.Spec.PodProbes) == 1 && m.Status.MatchedPods == 3 &&
			m.Status.ObservedGeneration == m.Generation && len(m.Finalizers) == 1 && m.Finalizers[0] == proberules.Finalizer
		return ok, fmt.Sprintf("marker %+v finalizers %v; %s: %+v; %s: %+v", m.Status, m.Finalizers, nodes[0], n0.Spec, nodes[1], n1.Spec)
	})
	pa := nodePodProbe(t, c, nodes[0]).Spec.PodProbes[0]
	if pa.Name != "a" || pa.UID != string(a.UID) || len(pa.Probes) != 2 || pa.Probes[0].Name != "game#idle" ||
		pa.Probes[1].Probe.HTTPGet.Port != intstr.FromInt32(8080) || pa.Probes[1].Probe.PeriodSeconds != 10 {
		t.Errorf("pod a's entry: %+v (want game#idle and game#web, port 8080, defaults)", pa)
	}

	reportStates(t, c, nodes[0], map[*corev1.Pod]map[string]appsv1alpha1.PodProbeMarkerState{
		a: {"game#idle": appsv1alpha1.PodProbeMarkerStateSucceeded, "game#web": appsv1alpha1.PodProbeMarkerStateFailed},
		b: {"game#idle": appsv1alpha1.PodProbeMarkerStateFailed}})
	marked := func(name, idle, cost string, status corev1.ConditionStatus) {
		t.Helper()
		harness.Eventually(t, 30*time.Second, "pod "+name+" marked idle="+idle, func() (bool, string) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			cd := podCondition(p, cond)
			return p.Labels["idle"] == idle && p.Annotations["controller.kubernetes.io/pod-deletion-cost"] == cost && cd != nil &&
				cd.Status == status && cd.Message == "reported by the test", harness.DescribePod(p) + fmt.Sprintf(" labels %v annotations %v", p.Labels, p.Annotations)
		})
	}
	marked("a", "true", "-10", corev1.ConditionTrue)
	marked("b", "false", "", corev1.ConditionFalse)
	if p, _ := cs.CoreV1().Pods(ns).Get(ctx, "a", metav1.GetOptions{}); podCondition(p, "game.example.com/web") == nil ||
		podCondition(p, "game.example.com/web").Status != corev1.ConditionFalse {
		t.Errorf("pod a lacks the web probe's False condition: %s", harness.DescribePod(p))
	}
	harness.Eventually(t, 30*time.Second, "an event on pod a for its probe", func() (bool, string) {
		evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=a"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Reason == podprobemarker.EventProbeSucceeded && strings.Contains(e.Note, "game#idle") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})

	// The state turns: the Succeeded policy's annotation goes, the Failed one's label comes.
	reportStates(t, c, nodes[0], map[*corev1.Pod]map[string]appsv1alpha1.PodProbeMarkerState{
		a: {"game#idle": appsv1alpha1.PodProbeMarkerStateFailed}, b: {"game#idle": appsv1alpha1.PodProbeMarkerStateFailed}})
	marked("a", "false", "", corev1.ConditionFalse)

	// A gone pod leaves its node's NodePodProbe.
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "b", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "pod b gone from the NodePodProbe", func() (bool, string) {
		n0 := nodePodProbe(t, c, nodes[0])
		return len(n0.Spec.PodProbes) == 1 && n0.Spec.PodProbes[0].Name == "a", fmt.Sprintf("%+v", n0.Spec)
	})

	// Refused: a gRPC probe, a changed selector; both name the field.
	bad := ppm.DeepCopy()
	bad.ResourceVersion, bad.Name = "", "grpc"
	bad.Spec.Probes = bad.Spec.Probes[:1]
	bad.Spec.Probes[0].Probe = appsv1alpha1.PodProbeMarkerProbeSpec{GRPC: &appsv1alpha1.PodProbeMarkerGRPCAction{Port: 9000}}
	if err := c.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "spec.probes[0].probe.grpc") {
		t.Errorf("a gRPC probe: %v", err)
	}
	cur := &appsv1alpha1.PodProbeMarker{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(ppm), cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec.Selector.MatchLabels["app"] = "web"
	if err := c.Update(ctx, cur); err == nil || !strings.Contains(err.Error(), "spec.selector") {
		t.Errorf("a selector change: %v", err)
	}

	// The marker goes: its probes leave the NodePodProbes, then its finalizer goes.
	if err := c.Delete(ctx, ppm); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the marker gone and its probes with it", func() (bool, string) {
		err := c.Get(ctx, client.ObjectKeyFromObject(ppm), &appsv1alpha1.PodProbeMarker{})
		n0, n1 := nodePodProbe(t, c, nodes[0]), nodePodProbe(t, c, nodes[1])
		return apierrors.IsNotFound(err) && len(n0.Spec.PodProbes) == 0 && len(n1.Spec.PodProbes) == 0, fmt.Sprintf("%v; %+v; %+v", err, n0.Spec, n1.Spec)
	})

	// A node that goes takes its NodePodProbe.
	if err := cs.CoreV1().Nodes().Delete(ctx, nodes[1], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the gone node's NodePodProbe deleted", func() (bool, string) {
		return nodePodProbe(t, c, nodes[1]) == nil, ""
	})
}
