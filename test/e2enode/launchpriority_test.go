package e2enode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// idle runs until stopped; slow becomes ready (its probe passes) only after a few seconds.
var (
	idle = []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"}
	slow = []string{"/bin/sh", "-c", "sleep 4; : > /ready; trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"}
)

const slowReadyAfter = 4 * time.Second

// launchPriorityPod: containers named as given, each idle; the first of order is slow to be ready
// (a readiness probe on a file it writes after four seconds).
func launchPriorityPod(sb *sandbox.Sandbox, ns, name string, names ...string) *corev1.Pod {
	pod := realPod(name, sb.Image("app:v1"))
	pod.Namespace = ns
	pod.Spec.Containers = nil
	for _, n := range names {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: n, Image: sb.Image("app:v1"), Command: idle})
	}
	return pod
}

func makeSlow(c *corev1.Container) {
	c.Command = slow
	c.ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1,
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/ready"}}}}
}

// launchesInOrder creates pod and watches every status the kubelet writes until all its containers
// are ready: in no status does a container run while one earlier in order (higher priority) is not
// ready; the containers' startedAt follow order, each after the previous was ready (the slow first
// one's at least its delay after it started). The barrier ends with every key and the pod is
// marked completed.
func launchesInOrder(t *testing.T, cs kubernetes.Interface, pod *corev1.Pod, order ...string) {
	t.Helper()
	ctx := context.Background()
	created, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Pods(pod.Namespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pod.Name,
		ResourceVersion: created.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	t0 := time.Now()
	timeout := time.After(3 * time.Minute)
	var last *corev1.Pod
	for done := false; !done; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed; last status: %s", harness.DescribePod(last))
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod || ev.Type == watch.Deleted {
				continue
			}
			last = p
			done = checkLaunchOrder(t, p, order)
		case <-timeout:
			t.Fatalf("containers not all ready after 3m; last status: %s", harness.DescribePod(last))
		}
	}
	t.Logf("%s: all containers ready in %.1fs", pod.Name, time.Since(t0).Seconds())
	status := map[string]corev1.ContainerStatus{}
	for _, s := range last.Status.ContainerStatuses {
		status[s.Name] = s
	}
	var started []string
	for i, name := range order {
		at := status[name].State.Running.StartedAt.Time
		started = append(started, fmt.Sprintf("%s@%s", name, at.Format("15:04:05")))
		if i == 0 {
			continue
		}
		prev := status[order[i-1]].State.Running.StartedAt.Time
		if at.Before(prev) {
			t.Errorf("%s started at %s, before %s (%s)", name, at, order[i-1], prev)
		}
		if i == 1 && at.Sub(prev) < slowReadyAfter-time.Second { // startedAt has seconds only
			t.Errorf("%s started %s after %s, which is ready only %s after it starts", name, at.Sub(prev), order[0], slowReadyAfter)
		}
	}
	t.Logf("started: %s", strings.Join(started, " "))
	harness.Eventually(t, 30*time.Second, "the barrier with every key and the pod marked completed", func() (bool, string) {
		cm, err := cs.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, pod.Name+"-barrier", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		p, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(cm.Data) == len(order) && p.Annotations[appspub.ContainerLaunchPriorityCompletedKey] == "true",
			fmt.Sprint(cm.Data, p.Annotations)
	})
}

// checkLaunchOrder fails the test when a container of p runs while one before it in order is not
// ready, and reports whether all are ready.
func checkLaunchOrder(t *testing.T, p *corev1.Pod, order []string) bool {
	t.Helper()
	status := map[string]corev1.ContainerStatus{}
	for _, s := range p.Status.ContainerStatuses {
		status[s.Name] = s
	}
	all := len(status) == len(order)
	for i, name := range order {
		s := status[name]
		all = all && s.Ready
		if s.State.Running == nil && s.State.Terminated == nil {
			continue
		}
		for _, before := range order[:i] {
			if !status[before].Ready {
				t.Fatalf("%s runs while %s is not ready: %s", name, before, harness.DescribePod(p))
			}
		}
	}
	return all
}

// containerLaunchOrdered: an Ordered pod of three containers, the first slow to be ready, starts
// them one by one in order; a pod with KRUISE_CONTAINER_PRIORITY values starts them by priority.
func containerLaunchOrdered(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface) {
	ns := harness.Namespace(t, cs)

	ordered := launchPriorityPod(sb, ns, "ordered", "first", "second", "third")
	ordered.Annotations = map[string]string{appspub.ContainerLaunchPriorityKey: appspub.ContainerLaunchOrdered}
	makeSlow(&ordered.Spec.Containers[0])
	launchesInOrder(t, cs, ordered, "first", "second", "third")

	// main (unset: 0), proxy (10, slow), last (-5): proxy, then main, then last.
	prio := launchPriorityPod(sb, ns, "by-priority", "main", "proxy", "last")
	makeSlow(&prio.Spec.Containers[1])
	prio.Spec.Containers[1].Env = []corev1.EnvVar{{Name: appspub.ContainerLaunchPriorityEnvName, Value: "10"}}
	prio.Spec.Containers[2].Env = []corev1.EnvVar{{Name: appspub.ContainerLaunchPriorityEnvName, Value: "-5"}}
	launchesInOrder(t, cs, prio, "proxy", "main", "last")
}
