package e2enode

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// rolloutRestart: `kubectl kruise rollout restart` restarts every container of a 3-pod CloneSet in
// place through ContainerRecreateRequests, one pod at a time (maxUnavailable 1): same pods, one
// restart each, never two pods NotReady at once.
func rolloutRestart(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	bin, err := harness.BuildCommand("kubectl-kruise")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	const replicas = 3
	clone := harness.NewCloneSet(ns, "restart", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, realPod("app", sb.Image("app:v1")).Spec)
	clone.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "restart", "3 pods ready", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ReadyReplicas == replicas
	})
	before := listPods(t, cs, ns)
	var peak atomic.Int32
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			n := int32(0)
			for _, p := range listPods(t, cs, ns) {
				if harness.PodCondition(p, corev1.PodReady) != corev1.ConditionTrue {
					n++
				}
			}
			if n > peak.Load() {
				peak.Store(n)
			}
		}
	}()
	cmd := exec.CommandContext(ctx, bin, "--kubeconfig", sb.Kubeconfig(), "-n", ns, "rollout", "restart", "clone/restart")
	out, err := cmd.CombinedOutput()
	close(stop)
	<-watched
	if err != nil {
		t.Fatalf("kubectl kruise rollout restart: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
	if !strings.Contains(string(out), "batch 3/3 done") {
		t.Errorf("want three batches of one pod:\n%s", out)
	}
	if p := peak.Load(); p > 1 || p == 0 {
		t.Errorf("up to %d pods were NotReady at once; want 1 (maxUnavailable 1, and the restart must show)", p)
	}
	for name, p := range listPods(t, cs, ns) {
		b, ok := before[name]
		if !ok || b.UID != p.UID || p.Status.ContainerStatuses[0].RestartCount != 1 {
			t.Errorf("pod %s after the restart: same pod %v, restarts %d", name, ok && b.UID == p.UID, p.Status.ContainerStatuses[0].RestartCount)
		}
	}
}

// kruiseExec: `kubectl kruise exec` streams a session to a pod's container on the real node
// (WebSocket, SPDY fallback): the command's output is its stdout, and it exits with the
// command's exit code.
func kruiseExec(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface) {
	bin, err := harness.BuildCommand("kubectl-kruise")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, realPod("exec", sb.Image("app:v1")), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, ns, pod.Name, 60*time.Second, "Running and Ready on the real node", func(p *corev1.Pod) bool {
		return p.Spec.NodeName == sandbox.RealNodeName && harness.PodCondition(p, corev1.PodReady) == corev1.ConditionTrue
	})
	run := func(command ...string) (stdout, stderr string, code int) {
		return runKruise(t, bin, append([]string{"--kubeconfig", sb.Kubeconfig(), "-n", ns, "exec", pod.Name, "-c", "app", "--"}, command...)...)
	}
	if out, errOut, code := run("echo", "hello"); out != "hello\n" || code != 0 {
		t.Errorf("exec -- echo hello: stdout %q, exit %d, stderr %q", out, code, errOut)
	}
	if out, errOut, code := run("sh", "-c", "echo oops >&2; exit 3"); code != 3 || !strings.Contains(errOut, "oops") || out != "" {
		t.Errorf("exec -- sh -c 'exit 3': exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// runKruise runs kubectl-kruise (bin) with args and gives its stdout, stderr and exit code.
func runKruise(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("kubectl kruise %v: %v", args, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// kruiseExecSidecar: `kubectl kruise exec POD -S SIDECAR` runs the command in a hot-upgraded
// sidecar's working copy, which it names on stderr.
func kruiseExecSidecar(t *testing.T, sb *sandbox.Sandbox, ns, pod, sidecar, working, command, want string) {
	t.Helper()
	bin, err := harness.BuildCommand("kubectl-kruise")
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runKruise(t, bin, "--kubeconfig", sb.Kubeconfig(), "-n", ns, "exec", pod, "-S", sidecar, "--", "sh", "-c", command)
	if code != 0 || strings.TrimSpace(out) != want || !strings.Contains(errOut, "its working container is "+working) {
		t.Errorf("kubectl kruise exec %s -S %s -- sh -c %q: exit %d, stdout %q (want %q), stderr %q (want it to name %s)",
			pod, sidecar, command, code, out, want, errOut, working)
	}
}
