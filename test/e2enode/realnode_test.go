// Package e2enode holds tests on the sandbox's real node: a kubelet v1.37.2 on containerd and runc,
// pulling from the sandbox's offline registry. They need root; on a machine that cannot run a real
// node they fail with the reason.
package e2enode

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// TestRealNode starts one sandbox with the real node (a kwok node beside it, and kruise-manager),
// runs the node stories on it, then tears it down and checks that nothing is left on the host.
func TestRealNode(t *testing.T) {
	before := snapshotHost()
	t0 := time.Now()
	sb, err := harness.StartRealNodeSandbox(1, true, os.Stderr)
	if err != nil {
		t.Fatalf("start a sandbox with a real node: %v", err)
	}
	t.Logf("sandbox with a real node up in %.1fs", time.Since(t0).Seconds())
	down := false
	t.Cleanup(func() {
		if !down {
			_ = harness.Down(sb)
		}
	})
	cfg, err := sb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)

	t.Run("the real node is a kubelet on containerd, untouched by kwok", func(t *testing.T) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), sandbox.RealNodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		info := n.Status.NodeInfo
		if info.KubeletVersion != "v1.37.2" || !strings.HasPrefix(info.ContainerRuntimeVersion, "containerd://") {
			t.Errorf("node %s runs kubelet %q on %q, want v1.37.2 on containerd", n.Name, info.KubeletVersion, info.ContainerRuntimeVersion)
		}
		if n.Labels[sandbox.NodeTypeLabel] != "real" {
			t.Errorf("node labels %v lack %s=real", n.Labels, sandbox.NodeTypeLabel)
		}
		if _, ok := n.Annotations[sandbox.FakeNodeAnnotation]; ok {
			t.Errorf("the real node carries kwok's annotation %s", sandbox.FakeNodeAnnotation)
		}
		if !hasAddress(n, sandbox.RealNodeIP) {
			t.Errorf("node addresses %v lack %s", n.Status.Addresses, sandbox.RealNodeIP)
		}
	})

	t.Run("an image change restarts the container in place", func(t *testing.T) {
		inPlaceImageUpdate(t, sb, cs)
	})

	t.Run("a readiness gate holds the endpoint not ready while the container runs", func(t *testing.T) {
		readinessGateEndpoint(t, sb, cs)
	})

	t.Run("a CloneSet rolls app:v1 to app:v2 in place", func(t *testing.T) {
		cloneSetInPlace(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("an Advanced StatefulSet rolls app:v1 to app:v2 in place, keeping identity and volumes", func(t *testing.T) {
		statefulSetInPlace(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("an Advanced DaemonSet's pod on the real node is updated in place", func(t *testing.T) {
		daemonSetInPlace(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("a BroadcastJob's pod runs to completion on the real node", func(t *testing.T) {
		broadcastJobCompletes(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("an OrderedReady StatefulSet waits for each pod's readiness probe", func(t *testing.T) {
		statefulSetOrderedReadyProbe(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("a grace period takes the pod out of the Service before its container restarts", func(t *testing.T) {
		gracePeriodEndpoint(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("no traffic to a pod whose container is about to restart: 20 in-place updates", func(t *testing.T) {
		noTrafficDuringRestart(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("kruise-daemon talks to containerd over CRI", func(t *testing.T) {
		daemonOverCRI(t, sb, cs)
	})

	t.Run("an ImagePullJob pulls onto the real node with its pull secret", func(t *testing.T) {
		pullJobWithSecret(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("an ImageListPullJob pulls each of its images", func(t *testing.T) {
		imageListPull(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("a daemon killed mid-pull: the restarted daemon finishes the job", func(t *testing.T) {
		daemonKilledMidPull(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("a CloneSet pre-downloads its new image before the pods are updated", func(t *testing.T) {
		cloneSetPreDownload(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("a ContainerRecreateRequest restarts one container of a running pod", func(t *testing.T) {
		containerRecreate(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("an annotation read into env restarts the container in place", func(t *testing.T) {
		envFromMetadataInPlace(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("kubectl kruise rollout restart restarts every pod in place, batch by batch", func(t *testing.T) {
		rolloutRestart(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("kubectl kruise exec streams a session and exits with the command's code", func(t *testing.T) {
		kruiseExec(t, sb, cs)
	})

	t.Run("a CPU change resizes the container in place", func(t *testing.T) {
		resizeInPlace(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("a Job whose main container exits completes: its sidecar is stopped", func(t *testing.T) {
		sidecarTerminatorJob(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("PodProbeMarker probes mark a pod as its app changes", func(t *testing.T) {
		podProbeMarkerFlips(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("EphemeralJobs debug a CloneSet's pods: success, failure, deadline, TTL", func(t *testing.T) {
		ephemeralJobs(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("kruise-daemon is granted only what it uses", func(t *testing.T) {
		daemonPermissionsUsed(t, sb, cfg)
	})

	t.Run("a SidecarSet injects a sidecar into a CloneSet's pods and upgrades it in place", func(t *testing.T) {
		sidecarSetUpgradesInPlace(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("a hot upgrade keeps a client's requests answered through the flip", func(t *testing.T) {
		sidecarSetHotUpgrade(t, sb, cs, harness.KruiseClient(t, cfg))
	})

	t.Run("containers start in launch priority order", func(t *testing.T) {
		containerLaunchOrdered(t, sb, cs)
	})

	t.Run("teardown leaves nothing behind", func(t *testing.T) {
		dir := sb.Dir
		t0 := time.Now()
		down = true
		if err := harness.Down(sb); err != nil {
			t.Fatalf("down: %v", err)
		}
		t.Logf("down in %.1fs", time.Since(t0).Seconds())
		after := snapshotHost()
		for _, d := range before.diff(after) {
			t.Error(d)
		}
		if pids := sandbox.ProcessesMentioning(dir); len(pids) > 0 {
			t.Errorf("processes still name the sandbox folder %s: %v", dir, pids)
		}
		if pids := sandbox.ProcessesMentioning(sandbox.RealRunDir); len(pids) > 0 {
			t.Errorf("processes still name %s: %v", sandbox.RealRunDir, pids)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the sandbox folder %s is still there (%v)", dir, err)
		}
	})
}

func inPlaceImageUpdate(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	pod := realPod("app", sb.Image("app:v1"))
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	running := waitPod(t, cs, ns, pod.Name, 60*time.Second, "Running and Ready on the real node", func(p *corev1.Pod) bool {
		return p.Spec.NodeName == sandbox.RealNodeName && harness.PodCondition(p, corev1.PodReady) == corev1.ConditionTrue
	})
	if got := execIn(t, sb, ns, pod.Name, "cat", "/etc/app-version"); got != "v1" {
		t.Fatalf("/etc/app-version in the container says %q, want v1", got)
	}
	before := running.Status.ContainerStatuses[0]

	patch := fmt.Sprintf(`{"spec":{"containers":[{"name":"app","image":%q}]}}`, sb.Image("app:v2"))
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	updated := waitPod(t, cs, ns, pod.Name, 60*time.Second, "restarted on app:v2 and Ready", func(p *corev1.Pod) bool {
		c := p.Status.ContainerStatuses
		return len(c) == 1 && c[0].RestartCount == 1 && c[0].State.Running != nil && c[0].Ready &&
			c[0].ImageID != before.ImageID && harness.PodCondition(p, corev1.PodReady) == corev1.ConditionTrue
	})
	after := updated.Status.ContainerStatuses[0]
	if updated.UID != running.UID || updated.Status.PodIP != running.Status.PodIP || updated.Spec.NodeName != running.Spec.NodeName {
		t.Errorf("the pod was replaced: uid %s→%s, ip %s→%s, node %s→%s", running.UID, updated.UID,
			running.Status.PodIP, updated.Status.PodIP, running.Spec.NodeName, updated.Spec.NodeName)
	}
	if after.ContainerID == before.ContainerID {
		t.Errorf("container ID unchanged (%s): the container was not restarted", after.ContainerID)
	}
	want := strings.TrimPrefix(sb.RealNode.Images[sb.Image("app:v2")], "sha256:")
	if !strings.Contains(after.ImageID, want) {
		t.Errorf("imageID %s does not name app:v2's digest %s", after.ImageID, want)
	}
	if got := execIn(t, sb, ns, pod.Name, "cat", "/etc/app-version"); got != "v2" {
		t.Errorf("/etc/app-version in the restarted container says %q, want v2", got)
	}
}

// gateType is the custom readiness gate; only this test sets it.
const gateType corev1.PodConditionType = "kruise.io/test-gate"

func readinessGateEndpoint(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	pod := realPod("gated", sb.Image("app:v1"))
	pod.Labels = map[string]string{"app": "gated"}
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gateType}}
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "gated"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "gated"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}},
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	started := waitPod(t, cs, ns, pod.Name, 60*time.Second, "containers ready, pod not Ready (gate unset)", func(p *corev1.Pod) bool {
		c := p.Status.ContainerStatuses
		return p.Status.PodIP != "" && len(c) == 1 && c[0].Ready && harness.PodCondition(p, corev1.PodReady) == corev1.ConditionFalse
	})
	ip := started.Status.PodIP
	waitEndpoint(t, cs, ns, "gated", ip, false, "listed but not ready while the gate is unset")
	// The endpoint must stay not ready: nothing but the gate holds the pod.
	harness.Consistently(t, 2*time.Second, "endpoint stays not ready without the gate", func() (bool, string) {
		ready, found := endpointReady(cs, ns, "gated", ip)
		return found && !ready, fmt.Sprintf("found=%v ready=%v", found, ready)
	})

	setGate(t, cs, ns, pod.Name, corev1.ConditionTrue)
	waitPod(t, cs, ns, pod.Name, 30*time.Second, "Ready after the gate is True", func(p *corev1.Pod) bool {
		return harness.PodCondition(p, corev1.PodReady) == corev1.ConditionTrue
	})
	waitEndpoint(t, cs, ns, "gated", ip, true, "ready once the gate is True")

	setGate(t, cs, ns, pod.Name, corev1.ConditionFalse)
	waitEndpoint(t, cs, ns, "gated", ip, false, "not ready again once the gate is False")
	final := waitPod(t, cs, ns, pod.Name, 30*time.Second, "not Ready with the gate False", func(p *corev1.Pod) bool {
		return harness.PodCondition(p, corev1.PodReady) == corev1.ConditionFalse
	})
	b, a := started.Status.ContainerStatuses[0], final.Status.ContainerStatuses[0]
	if a.RestartCount != b.RestartCount || a.ContainerID != b.ContainerID || a.State.Running == nil || !a.Ready {
		t.Errorf("the container was touched: restarts %d→%d, id %s→%s, running=%v ready=%v",
			b.RestartCount, a.RestartCount, b.ContainerID, a.ContainerID, a.State.Running != nil, a.Ready)
	}
}

// realPod is a pod pinned to the real node that stops within a second.
func realPod(name, image string) *corev1.Pod {
	grace := int64(1)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{sandbox.NodeTypeLabel: "real"},
			TerminationGracePeriodSeconds: &grace,
			Containers:                    []corev1.Container{{Name: "app", Image: image}},
		},
	}
}

func waitPod(t *testing.T, cs kubernetes.Interface, ns, name string, timeout time.Duration, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	harness.Eventually(t, timeout, "pod "+name+" "+what, func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		last = p
		return cond(p), harness.DescribePod(p)
	})
	return last
}

// setGate writes the gate condition with a strategic-merge patch of pods/status (conditions merge
// by type, so the kubelet's own conditions stay).
func setGate(t *testing.T, cs kubernetes.Interface, ns, name string, status corev1.ConditionStatus) {
	t.Helper()
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q,"lastTransitionTime":%q}]}}`,
		gateType, status, time.Now().UTC().Format(time.RFC3339))
	if _, err := cs.CoreV1().Pods(ns).Patch(context.Background(), name, types.StrategicMergePatchType, []byte(patch),
		metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("set %s=%s: %v", gateType, status, err)
	}
}

// endpointReady finds the pod IP among the EndpointSlices of Service svc.
func endpointReady(cs kubernetes.Interface, ns, svc, ip string) (ready, found bool) {
	slices, err := cs.DiscoveryV1().EndpointSlices(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return false, false
	}
	for i := range slices.Items {
		if ready, found := sliceEndpointReady(&slices.Items[i], ip); found {
			return ready, true
		}
	}
	return false, false
}

// sliceEndpointReady finds the IP among the slice's endpoints.
func sliceEndpointReady(s *discoveryv1.EndpointSlice, ip string) (ready, found bool) {
	for _, e := range s.Endpoints {
		for _, a := range e.Addresses {
			if a == ip {
				return e.Conditions.Ready != nil && *e.Conditions.Ready, true
			}
		}
	}
	return false, false
}

func waitEndpoint(t *testing.T, cs kubernetes.Interface, ns, svc, ip string, ready bool, what string) {
	t.Helper()
	harness.Eventually(t, 30*time.Second, "endpoint "+ip+" "+what, func() (bool, string) {
		r, found := endpointReady(cs, ns, svc, ip)
		return found && r == ready, fmt.Sprintf("found=%v ready=%v", found, r)
	})
}

// execIn runs a command in the pod's container through the API server and the kubelet (kubectl
// exec), returning its trimmed output.
func execIn(t *testing.T, sb *sandbox.Sandbox, ns, pod string, command ...string) string {
	t.Helper()
	args := append([]string{"--kubeconfig", sb.Kubeconfig(), "-n", ns, "exec", pod, "--"}, command...)
	out, err := exec.Command(filepath.Join(harness.BinDir(), "kubectl"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl exec %s -- %s: %v\n%s", pod, strings.Join(command, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func hasAddress(n *corev1.Node, ip string) bool {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && a.Address == ip {
			return true
		}
	}
	return false
}

// TestRealNodeNeedsRoot runs `kruise-sandbox up --real-node` as an unprivileged user: it must
// refuse with the reason, before starting or creating anything.
func TestRealNodeNeedsRoot(t *testing.T) {
	bin, err := harness.BuildCommand("kruise-sandbox")
	if err != nil {
		t.Fatal(err)
	}
	parent, err := os.MkdirTemp("", "kruise-nonroot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o777); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "sb")
	cmd := exec.Command(bin, "up", "--real-node", "--nodes", "0", "--dir", dir, "--bin-dir", harness.BinDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("up --real-node as uid 65534: want exit code 1, got %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--real-node needs root") {
		t.Errorf("the refusal does not say why:\n%s", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a refused start created %s (%v)", dir, err)
	}
}

// daemonGet is the body of kruise-daemon's answer to GET path over TLS (200 OK, else the test
// fails); /metrics is scraped as the sandbox's metrics scraper (kruise-metrics-reader).
func daemonGet(t *testing.T, sb *sandbox.Sandbox, path string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if path == "/metrics" {
		body, err := sb.ScrapeMetrics(ctx, sb.Ports.KruiseDaemon)
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", sb.Ports.KruiseDaemon, path), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := insecureTLS.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", path, resp.Status, body)
	}
	return string(body)
}

// insecureTLS reaches kruise-daemon's self-signed endpoints.
var insecureTLS = &http.Client{Timeout: 10 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback, self-signed

// daemonMetricsNeedAuthorization: kruise-daemon's /metrics (on the host network in a cluster)
// answers 401 without a token and 403 to a ServiceAccount without kruise-metrics-reader.
func daemonMetricsNeedAuthorization(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := harness.Namespace(t, cs)
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nosy"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "nosy", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for who, c := range map[string]struct {
		token string
		want  int
	}{"no token": {"", http.StatusUnauthorized}, "a ServiceAccount without the role": {tok.Status.Token, http.StatusForbidden}} {
		code, body, err := sandbox.GetMetrics(ctx, sb.Ports.KruiseDaemon, c.token)
		if err != nil || code != c.want {
			t.Errorf("%s: kruise-daemon's /metrics answered %d %.200s (%v), want %d", who, code, body, err, c.want)
		}
	}
}

// daemonOverCRI: kruise-daemon runs for the real node and talks to its containerd over CRI; it
// refuses to start, saying why, without a runtime, without a node name, or for a node that is not
// registered.
func daemonOverCRI(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface) {
	get := func(path string) string { t.Helper(); return daemonGet(t, sb, path) }
	if got := strings.TrimSpace(get("/healthz")); got != "ok" {
		t.Errorf("/healthz says %q", got)
	}
	daemonMetricsNeedAuthorization(t, sb, cs)
	want := fmt.Sprintf(`kruise_daemon_runtime_info{endpoint="unix://%s",node="%s",runtime="containerd",version="v2.4.2"} 1`,
		sandbox.ContainerdSocket(), sandbox.RealNodeName)
	if m := get("/metrics"); !strings.Contains(m, want) {
		t.Errorf("/metrics lacks %s:\n%s", want, m)
	}
	bin := filepath.Join(harness.RepoRoot(), "bin", "kruise-daemon") // built by StartRealNodeSandbox
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--node-name=" + sandbox.RealNodeName, "--runtime-endpoint=unix:///nonexistent/cri.sock"}, 1, "no container runtime answered"},
		{[]string{"--runtime-endpoint=unix://" + sandbox.ContainerdSocket()}, 2, "--node-name (or $NODE_NAME) is required"},
		{[]string{"--node-name=nope", "--runtime-endpoint=unix://" + sandbox.ContainerdSocket()}, 1, `node "nope" is not registered`},
	} {
		cmd := exec.Command(bin, append(tc.args, "--kubeconfig="+sb.Kubeconfig(), "--health-probe-bind-address=127.0.0.1:0")...)
		cmd.Env = append(os.Environ(), "NODE_NAME=")
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != tc.code || !strings.Contains(string(out), tc.says) {
			t.Errorf("kruise-daemon %v: exit %d, output %q; want exit %d saying %q", tc.args, code, out, tc.code, tc.says)
		}
	}
}
