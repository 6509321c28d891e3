package e2enode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/app/sandbox/images"
	"github.com/kruise-ng/kruise/pkg/core/podgate"
	"github.com/kruise-ng/kruise/test/harness"
)

// TestHelmInstall: on a sandbox with the real node and no Kruise of its own, Kruise's binaries
// (static, layered onto the registry's busybox base image) are installed with the Helm chart;
// kruise-manager and kruise-daemon run as pods on the real node, the API server reaches the
// webhooks through their Service (endpoint routing, no kube-proxy), and a CloneSet rolls out in
// place through them.
func TestHelmInstall(t *testing.T) {
	sb, err := harness.StartRealNodeSandbox(0, false, os.Stderr)
	if err != nil {
		t.Fatalf("start a sandbox with a real node: %v", err)
	}
	t.Cleanup(func() {
		if err := harness.Down(sb); err != nil {
			t.Error(err)
		}
	})
	ctx := context.Background()
	ref := pushKruiseImage(t, sb)
	cfg, err := sb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)

	// The pods reach the API server on the host's loopback (host network; there is no kube-proxy
	// for the kubernetes Service), and take free host ports.
	repo := strings.TrimSuffix(ref, ":dev")
	api := fmt.Sprint(sb.Ports.APIServer)
	values := fmt.Sprintf(`image: {repository: %q, tag: dev}
manager:
  replicas: 1
  hostNetwork: true
  webhookPort: %d
  metricsPort: %d
  healthPort: %d
  resources: {requests: {cpu: 10m, memory: 32Mi}}
  extraEnv: &api [{name: KUBERNETES_SERVICE_HOST, value: 127.0.0.1}, {name: KUBERNETES_SERVICE_PORT, value: %q}]
daemon:
  socketLocation: %s
  runtimeEndpoint: unix://%s
  healthPort: %d
  resources: {requests: {cpu: 10m, memory: 32Mi}}
  extraEnv: *api
`, repo, harness.FreePort(t), harness.FreePort(t), harness.FreePort(t), api, filepath.Dir(sandbox.ContainerdSocket()), sandbox.ContainerdSocket(), harness.FreePort(t))
	valuesFile := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(valuesFile, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	harness.Helm(t, sb, "install", "kruise", "charts/kruise", "--namespace", "kruise-system", "--create-namespace",
		"-f", valuesFile, "--wait", "--timeout", "3m")
	t.Logf("helm install: manager and daemon ready in %.1fs", time.Since(t0).Seconds())

	for _, app := range []string{"manager", "daemon"} {
		pods, err := cs.CoreV1().Pods("kruise-system").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=" + app})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) != 1 || pods.Items[0].Spec.NodeName != sandbox.RealNodeName || harness.PodCondition(&pods.Items[0], corev1.PodReady) != corev1.ConditionTrue {
			t.Fatalf("want one ready %s pod on %s, got %d: %v", app, sandbox.RealNodeName, len(pods.Items), describePods(pods.Items))
		}
	}
	// The manager registered its webhooks by Service and filled in their CA.
	mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "kruise-mutating-webhook-configuration", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range mwc.Webhooks {
		if w.ClientConfig.Service == nil || w.ClientConfig.URL != nil || len(w.ClientConfig.CABundle) == 0 {
			t.Fatalf("webhook %s is not registered by Service with a CA: %+v", w.Name, w.ClientConfig)
		}
	}

	c := harness.KruiseClient(t, cfg)
	ns := harness.Namespace(t, cs)
	// The validating webhook answers through the Service.
	bad := harness.NewCloneSet(ns, "bad", 1, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, realPod("app", sb.Image("app:v1")).Spec)
	bad.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString("0%")) // and no surge: it could never progress
	if err := c.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "spec.updateStrategy.maxUnavailable") {
		t.Fatalf("an invalid CloneSet: got %v, want a refusal naming spec.updateStrategy.maxUnavailable", err)
	}

	const replicas = 3
	clone := harness.NewCloneSet(ns, "web", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, realPod("app", sb.Image("app:v1")).Spec)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 2*time.Minute, ns, "web", "3 pods ready on v1", harness.RolledOut(replicas))
	before := listPods(t, cs, ns)
	for name, p := range before {
		// The pod webhook (through the Service) added the gate.
		if !podgate.HasKruisePodReady(p) {
			t.Errorf("pod %s lacks the %s readiness gate: %v", name, appspub.KruisePodReadyConditionType, p.Spec.ReadinessGates)
		}
	}
	patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":%q}]`, sb.Image("app:v2"))
	if err := c.Patch(ctx, clone, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	after := waitRolledInPlaceToV2(t, sb, cs, c, ns, "web", before, 2*time.Minute)
	for name := range after {
		// kruise-daemon, as a pod, reports what containerd runs.
		harness.Eventually(t, 30*time.Second, "container meta of "+name, func() (bool, string) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			raw := p.Annotations[appspub.RuntimeContainerMetaKey]
			return strings.Contains(raw, p.Status.ContainerStatuses[0].ContainerID), raw
		})
	}

	harness.Helm(t, sb, "uninstall", "kruise", "--namespace", "kruise-system", "--wait", "--timeout", "2m")
	harness.Eventually(t, 60*time.Second, "manager and daemon pods gone", func() (bool, string) {
		pods, err := cs.CoreV1().Pods("kruise-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 0, describePods(pods.Items)
	})
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "kruise-mutating-webhook-configuration", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the webhook configuration outlived the release: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(clone), &appsv1alpha1.CloneSet{}); err != nil {
		t.Errorf("the CloneSet (and its CRD, kept on uninstall) is gone: %v", err)
	}
}

// pushKruiseImage builds kruise-manager and kruise-daemon statically and pushes them, on the
// busybox base, to the sandbox's registry as kruise:dev.
func pushKruiseImage(t *testing.T, sb *sandbox.Sandbox) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", dir+"/", "./cmd/kruise-manager", "./cmd/kruise-daemon")
	cmd.Dir, cmd.Env = harness.RepoRoot(), append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the binaries: %v\n%s", err, out)
	}
	files := map[string][]byte{}
	for _, name := range []string{"kruise-manager", "kruise-daemon"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	t0 := time.Now()
	ref, err := sb.PushImage(context.Background(), images.Spec{Repository: "kruise", Tag: "dev", Files: files})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pushed %s (%.1fs)", ref, time.Since(t0).Seconds())
	return ref
}

func describePods(pods []corev1.Pod) string {
	var out []string
	for i := range pods {
		out = append(out, harness.DescribePod(&pods[i]))
	}
	return strings.Join(out, "; ")
}
