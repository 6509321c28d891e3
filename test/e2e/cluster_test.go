package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/test/harness"
)

func podSpec(image string) corev1.PodSpec {
	return corev1.PodSpec{
		Containers:                    []corev1.Container{{Name: "app", Image: image}},
		TerminationGracePeriodSeconds: ptr.To[int64](1),
	}
}

// A Deployment on kwok nodes is scheduled, started and becomes Ready through the real
// kube-controller-manager and kube-scheduler.
func TestDeploymentBecomesReady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := namespace(t)
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](20),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec("registry.example/web:v1")},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 90*time.Second, "20 ready replicas", func() (bool, string) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == 20 && d.Status.AvailableReplicas == 20,
			fmt.Sprintf("replicas=%d ready=%d available=%d", d.Status.Replicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas)
	})
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]int{}
	for _, p := range pods.Items {
		nodes[p.Spec.NodeName]++
		if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.Status.ContainerStatuses[0].ImageID == "" {
			t.Errorf("pod not running like a kubelet would report it: %s", describe(&p))
		}
	}
	if len(nodes) != 3 {
		t.Errorf("pods spread over %d nodes (%v); want all 3 kwok nodes used", len(nodes), nodes)
	}
}

// Changing a running pod's image restarts its container in place: same pod, new image and
// imageID, restartCount 1, NotReady while restarting and Ready again after.
func TestImageChangeRestartsContainerInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := namespace(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}, Spec: podSpec("registry.example/app:v1")}
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := waitPod(t, ns, "app", "running and Ready", func(p *corev1.Pod) bool {
		return condition(p, corev1.PodReady) == corev1.ConditionTrue
	})
	oldImageID := before.Status.ContainerStatuses[0].ImageID
	seen := recordPod(t, ns, "app")

	patch := []byte(`{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}`)
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, "app", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	after := waitPod(t, ns, "app", "restarted with v2 and Ready", func(p *corev1.Pod) bool {
		c := p.Status.ContainerStatuses[0]
		return c.Image == "registry.example/app:v2" && c.RestartCount == 1 && c.Ready && condition(p, corev1.PodReady) == corev1.ConditionTrue
	})
	c := after.Status.ContainerStatuses[0]
	sawNotReady := false
	for _, p := range seen() {
		if condition(p, corev1.PodReady) == corev1.ConditionFalse && len(p.Status.ContainerStatuses) > 0 &&
			!p.Status.ContainerStatuses[0].Ready && p.Status.ContainerStatuses[0].RestartCount == 0 {
			sawNotReady = true
		}
	}
	if !sawNotReady {
		t.Errorf("the pod never turned NotReady while its container restarted")
	}
	if after.UID != pod.UID {
		t.Errorf("pod was recreated: uid %s -> %s", pod.UID, after.UID)
	}
	if c.ImageID == oldImageID || c.ImageID == "" {
		t.Errorf("imageID did not change with the image: %q -> %q", oldImageID, c.ImageID)
	}
	if c.LastTerminationState.Terminated == nil {
		t.Errorf("no last termination state recorded for the restarted container: %s", describe(after))
	}
	if after.Status.PodIP != before.Status.PodIP || after.Spec.NodeName != before.Spec.NodeName {
		t.Errorf("pod moved: ip %s -> %s, node %s -> %s", before.Status.PodIP, after.Status.PodIP, before.Spec.NodeName, after.Spec.NodeName)
	}
}

// A readiness gate holds a running pod NotReady until its owner sets the condition True through
// the status subresource, and turns it NotReady again when set False.
func TestReadinessGateControlsReady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := namespace(t)
	const gate = "example.kruise.io/gate"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gated", Namespace: ns}, Spec: podSpec("registry.example/app:v1")}
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running := func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && condition(p, corev1.ContainersReady) == corev1.ConditionTrue
	}
	waitPod(t, ns, "gated", "containers ready", running)
	harness.Consistently(t, 2*time.Second, "pod NotReady while the gate condition is absent", func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "gated", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return condition(p, corev1.PodReady) == corev1.ConditionFalse, describe(p)
	})

	setGate := func(status corev1.ConditionStatus) {
		t.Helper()
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q,"lastTransitionTime":%q}]}}`,
			gate, status, time.Now().UTC().Format(time.RFC3339))
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, "gated", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
	setGate(corev1.ConditionTrue)
	waitPod(t, ns, "gated", "Ready once the gate is True", func(p *corev1.Pod) bool {
		return condition(p, corev1.PodReady) == corev1.ConditionTrue
	})
	setGate(corev1.ConditionFalse)
	p := waitPod(t, ns, "gated", "NotReady once the gate is False", func(p *corev1.Pod) bool {
		return condition(p, corev1.PodReady) == corev1.ConditionFalse
	})
	if !running(p) || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("the gate must not touch the container: %s", describe(p))
	}
}

func waitPod(t *testing.T, ns, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	harness.Eventually(t, 60*time.Second, fmt.Sprintf("pod %s/%s %s", ns, name, what), func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		last = p
		return len(p.Status.ContainerStatuses) > 0 && cond(p), describe(p)
	})
	return last
}

// recordPod watches a pod from now on and returns a function listing every version seen so far.
func recordPod(t *testing.T, ns, name string) func() []*corev1.Pod {
	t.Helper()
	w, err := cs.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	var seen []*corev1.Pod
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				mu.Lock()
				seen = append(seen, p)
				mu.Unlock()
			}
		}
	}()
	return func() []*corev1.Pod {
		mu.Lock()
		defer mu.Unlock()
		return append([]*corev1.Pod(nil), seen...)
	}
}
