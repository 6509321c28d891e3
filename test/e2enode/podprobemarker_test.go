package e2enode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// probedApp serves /www over HTTP on 8080 ("web"), accepts TCP on 9000 ("tcp") while /state/tcp
// exists, and is idle while /state/idle exists (busybox's applets: the image links only a few).
const probedApp = `busybox mkdir -p /www /state && echo up > /www/index.html && busybox httpd -p 8080 -h /www &&
while :; do if [ -f /state/tcp ]; then busybox nc -l -p 9000 </dev/null; else sleep 0.2; fi; done`

// podProbeMarkerFlips: kruise-daemon runs a PodProbeMarker's exec, HTTP and TCP probes against a
// pod on the real node, and the pod's conditions, labels and annotations follow as the test
// changes the app's state through kubectl exec; a probe of a container the pod lacks is reported.
func podProbeMarkerFlips(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	pod := realPod("game", sb.Image("app:v1"))
	pod.Labels = map[string]string{"app": "game"}
	pod.Spec.Containers[0].Command = []string{"sh", "-c", probedApp}
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "web", ContainerPort: 8080}, {Name: "tcp", ContainerPort: 9000}}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, ns, "game", 2*time.Minute, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	fast := func(s v1alpha1.PodProbeMarkerProbeSpec) v1alpha1.PodProbeMarkerProbeSpec {
		s.PeriodSeconds, s.TimeoutSeconds, s.SuccessThreshold, s.FailureThreshold = 1, 1, 1, 1
		return s
	}
	ppm := &v1alpha1.PodProbeMarker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "game"},
		Spec: v1alpha1.PodProbeMarkerSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "game"}},
			Probes: []v1alpha1.PodProbeMarkerProbe{
				{Name: "idle", ContainerName: "app", PodConditionType: "game.example.com/idle",
					Probe: fast(v1alpha1.PodProbeMarkerProbeSpec{Exec: &corev1.ExecAction{Command: []string{"cat", "/state/idle"}}}),
					MarkerPolicy: []v1alpha1.PodProbeMarkerPolicy{
						{State: v1alpha1.PodProbeMarkerStateSucceeded, Labels: map[string]string{"idle": "true"}},
						{State: v1alpha1.PodProbeMarkerStateFailed, Labels: map[string]string{"idle": "false"}}}},
				{Name: "web", ContainerName: "app", PodConditionType: "game.example.com/web",
					Probe: fast(v1alpha1.PodProbeMarkerProbeSpec{HTTPGet: &v1alpha1.PodProbeMarkerHTTPGetAction{Path: "/ready.html",
						Port: intstr.FromString("web"), Scheme: corev1.URISchemeHTTP}})},
				{Name: "tcp", ContainerName: "app",
					Probe: fast(v1alpha1.PodProbeMarkerProbeSpec{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("tcp")}}),
					MarkerPolicy: []v1alpha1.PodProbeMarkerPolicy{
						{State: v1alpha1.PodProbeMarkerStateSucceeded, Annotations: map[string]string{"game.example.com/accepting": "true"}}}},
				{Name: "typo", ContainerName: "no-such-container", PodConditionType: "game.example.com/typo",
					Probe: fast(v1alpha1.PodProbeMarkerProbeSpec{Exec: &corev1.ExecAction{Command: []string{"true"}}})},
			}}}
	if err := c.Create(ctx, ppm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ppm) })
	status := func(p *corev1.Pod, typ string) string {
		for _, cd := range p.Status.Conditions {
			if string(cd.Type) == typ {
				return string(cd.Status) + " (" + cd.Message + ")"
			}
		}
		return "none"
	}
	expect := func(what string, idle, web, accepting string) {
		t.Helper()
		t0 := time.Now()
		waitPod(t, cs, ns, "game", time.Minute, what, func(p *corev1.Pod) bool {
			return p.Labels["idle"] == idle && strings.HasPrefix(status(p, "game.example.com/idle"), map[string]string{"true": "True", "false": "False"}[idle]) &&
				strings.HasPrefix(status(p, "game.example.com/web"), web) && p.Annotations["game.example.com/accepting"] == accepting
		})
		t.Logf("%s: marked %.1fs after the change", what, time.Since(t0).Seconds())
	}
	expect("everything failing at first", "false", "False", "")
	p, _ := cs.CoreV1().Pods(ns).Get(ctx, "game", metav1.GetOptions{})
	if got := status(p, "game.example.com/typo"); !strings.Contains(got, `container "no-such-container" is not in pod`) {
		t.Errorf("the probe of a missing container: condition %s", got)
	}
	execIn(t, sb, ns, "game", "busybox", "touch", "/state/idle")
	expect("idle after touching /state/idle (exec)", "true", "False", "")
	execIn(t, sb, ns, "game", "sh", "-c", "echo ok > /www/ready.html && busybox touch /state/tcp")
	expect("web ready and accepting (HTTP, TCP)", "true", "True", "true")
	execIn(t, sb, ns, "game", "busybox", "rm", "/state/idle", "/www/ready.html", "/state/tcp")
	expect("busy, not ready and not accepting: the Succeeded-only annotation stays, as OpenKruise leaves it", "false", "False", "true")
	// No mark shows the TCP probe's failure (its one policy is Succeeded's): kruise-daemon's report does.
	harness.Eventually(t, time.Minute, "the TCP probe reported Failed once nothing listens", func() (bool, string) {
		npp := &v1alpha1.NodePodProbe{}
		if err := c.Get(ctx, client.ObjectKey{Name: sandbox.RealNodeName}, npp); err != nil {
			return false, err.Error()
		}
		for _, ps := range npp.Status.PodProbeStatuses {
			for _, st := range ps.ProbeStates {
				if ps.Namespace == ns && st.Name == "game#tcp" {
					return st.State == v1alpha1.PodProbeMarkerStateFailed, fmt.Sprintf("%+v", st)
				}
			}
		}
		return false, fmt.Sprintf("no state of game#tcp in %+v", npp.Status)
	})
	if out := daemonGet(t, sb, "/metrics"); !strings.Contains(out, `kruise_daemon_pod_probe_results_total{namespace="`+ns+`",probe="game#web",result="succeeded"}`) ||
		!strings.Contains(out, `probe="game#typo",result="container_missing"`) {
		t.Errorf("kruise-daemon's probe metrics lack the web successes or the missing container:\n%s", grepLines(out, "pod_probe"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
