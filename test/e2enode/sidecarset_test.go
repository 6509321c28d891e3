package e2enode

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/app/sandbox/images"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/test/harness"
)

// sidecarPort is where the sidecar images serve their version.
const sidecarPort = 8080

// sidecarServe is the entrypoint of the sidecar images: it serves /etc (so GET /app-version says
// the image's version) on sidecarPort with busybox's httpd, retrying the bind every 0.2 s until the
// port is free (the two copies of a hot-upgrade sidecar share the pod's network namespace: the new
// one binds once the old one is gone), then idles until SIGTERM, on which it exits at once.
var sidecarServe = []string{"/bin/sh", "-c", fmt.Sprintf("trap 'exit 0' TERM; "+
	"until busybox httpd -p %d -h /etc; do sleep 0.2; done; "+
	"while :; do sleep 1 & wait $!; done", sidecarPort)}

// pushSidecarImages pushes sidecar:v1 and sidecar:v2, which serve their version over HTTP (and
// say it in /etc/app-version), and sidecar:empty, which only sleeps (a hot upgrade's empty image),
// to the sandbox's registry; it returns their references.
func pushSidecarImages(t *testing.T, sb *sandbox.Sandbox) (v1, v2, empty string) {
	t.Helper()
	ctx := context.Background()
	refs := make([]string, 3)
	for i, spec := range []images.Spec{
		{Repository: "sidecar", Tag: "v1", Version: "v1", Command: sidecarServe},
		{Repository: "sidecar", Tag: "v2", Version: "v2", Command: sidecarServe},
		{Repository: "sidecar", Tag: "empty", Command: []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"}},
	} {
		ref, err := sb.PushImage(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		refs[i] = ref
	}
	return refs[0], refs[1], refs[2]
}

// newRealSidecarSet selects the pods labelled app=APP in namespace ns and injects sidecar.
func newRealSidecarSet(ns, app string, sidecar appsv1beta1.SidecarSetContainer) *appsv1beta1.SidecarSet {
	return &appsv1beta1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: app + "-" + ns},
		Spec: appsv1beta1.SidecarSetSpec{
			Selector:          &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			Containers:        []appsv1beta1.SidecarSetContainer{sidecar},
		},
	}
}

// createRealSidecarSet creates s (deleted with the test) and waits until kruise-manager has
// registered its injection (apps.kruise.io/injection-registered-generation = its generation).
func createRealSidecarSet(t *testing.T, c client.Client, s *appsv1beta1.SidecarSet) *appsv1beta1.SidecarSet {
	t.Helper()
	if err := c.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), s) })
	return waitSidecarSet(t, c, s.Name, 30*time.Second, "injection registered", func(s *appsv1beta1.SidecarSet) bool {
		return s.Annotations[sidecarrules.RegisteredAnnotation] == strconv.FormatInt(s.Generation, 10)
	})
}

// waitSidecarSet polls SidecarSet name until cond holds.
func waitSidecarSet(t *testing.T, c client.Client, name string, timeout time.Duration, what string,
	cond func(*appsv1beta1.SidecarSet) bool) *appsv1beta1.SidecarSet {
	t.Helper()
	got := &appsv1beta1.SidecarSet{}
	harness.Eventually(t, timeout, "SidecarSet "+name+" "+what, func() (bool, string) {
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, got); err != nil {
			return false, err.Error()
		}
		return cond(got), fmt.Sprintf("generation %d, annotations %v, status %+v", got.Generation, got.Annotations, got.Status)
	})
	return got
}

// sidecarSetDone holds once the SidecarSet's status is of its current generation and every one of
// n pods runs its latest sidecars, ready.
func sidecarSetDone(n int32) func(*appsv1beta1.SidecarSet) bool {
	return func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.MatchedPods == n &&
			s.Status.UpdatedPods == n && s.Status.UpdatedReadyPods == n
	}
}

// setSidecarImage sets the image of SidecarSet name's container `sidecar`, leaving the rest of
// the container as it is (a merge patch would replace the whole containers list, dropping e.g. a
// HotUpgrade upgradeStrategy, which the SidecarSet webhook keeps immutable).
func setSidecarImage(t *testing.T, c client.Client, name, image string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &appsv1beta1.SidecarSet{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, s); err != nil {
			return err
		}
		for i := range s.Spec.Containers {
			if s.Spec.Containers[i].Name == "sidecar" {
				s.Spec.Containers[i].Image = image
			}
		}
		return c.Update(context.Background(), s)
	})
	if err != nil {
		t.Fatalf("set the image of SidecarSet %s to %s: %v", name, image, err)
	}
}

// statusOf returns the status of pod's container name (nil if it has none).
func statusOf(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// specOf returns pod's container name (nil if it has none).
func specOf(p *corev1.Pod, name string) *corev1.Container {
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == name {
			return &p.Spec.Containers[i]
		}
	}
	return nil
}

// execInContainer runs a command in one container of the pod through the API server and the
// kubelet (kubectl exec -c), returning its trimmed output.
func execInContainer(t *testing.T, sb *sandbox.Sandbox, ns, pod, container string, command ...string) string {
	t.Helper()
	args := append([]string{"--kubeconfig", sb.Kubeconfig(), "-n", ns, "exec", pod, "-c", container, "--"}, command...)
	out, err := exec.Command(filepath.Join(harness.BinDir(), "kubectl"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl exec %s -c %s -- %s: %v\n%s", pod, container, strings.Join(command, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// sidecarClient asks the sidecars for their version, from the host, through the pod IPs.
var sidecarClient = &http.Client{Timeout: time.Second}

// askVersion GETs /app-version from the sidecar serving on ip.
func askVersion(ip string) (string, error) {
	resp, err := sidecarClient.Get(fmt.Sprintf("http://%s:%d/app-version", ip, sidecarPort))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, body)
	}
	return strings.TrimSpace(string(body)), nil
}

// waitVersion waits until the sidecar on ip answers want over HTTP.
func waitVersion(t *testing.T, pod, ip, want string) {
	t.Helper()
	harness.Eventually(t, 30*time.Second, fmt.Sprintf("the sidecar of pod %s (%s) serving %s", pod, ip, want), func() (bool, string) {
		got, err := askVersion(ip)
		if err != nil {
			return false, err.Error()
		}
		return got == want, got
	})
}

// sidecarSetUpgradesInPlace: a SidecarSet injects the sidecar `sidecar` (sidecar:v1, serving its
// version over HTTP) into the pods of a 2-pod CloneSet on the real node at their creation; its image
// changes to sidecar:v2 and, once its status reports every pod updated and ready, each pod is the
// same pod (UID), its app container untouched (same container ID, no restart), its sidecar restarted
// once by the kubelet onto sidecar:v2, and the sidecar says v2 both to kubectl exec and over HTTP.
func sidecarSetUpgradesInPlace(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	v1, v2, _ := pushSidecarImages(t, sb)
	const replicas = 2
	set := createRealSidecarSet(t, c, newRealSidecarSet(ns, "web", appsv1beta1.SidecarSetContainer{
		Container: corev1.Container{Name: "sidecar", Image: v1}}))
	clone := harness.NewCloneSet(ns, "web", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType,
		realPod("app", sb.Image("app:v1")).Spec)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "web", "2 pods ready with their sidecar", harness.RolledOut(replicas))
	first := waitSidecarSet(t, c, set.Name, 60*time.Second, "reports both pods", sidecarSetDone(replicas))
	before := listPods(t, cs, ns)
	for name, p := range before {
		if got := containerNames(p.Spec.Containers); !slices.Equal(got, []string{"sidecar", "app"}) {
			t.Fatalf("pod %s: containers %v, want the sidecar injected before the app: [sidecar app]", name, got)
		}
		if got := p.Annotations[sidecarrules.InjectedListAnnotation]; got != set.Name {
			t.Errorf("pod %s: %s = %q, want %q", name, sidecarrules.InjectedListAnnotation, got, set.Name)
		}
		if st := statusOf(p, "sidecar"); st == nil || st.State.Running == nil || !st.Ready || st.RestartCount != 0 {
			t.Fatalf("pod %s: the sidecar is not running: %s", name, harness.DescribePod(p))
		}
		if got := execInContainer(t, sb, ns, name, "sidecar", "cat", "/etc/app-version"); got != "v1" {
			t.Fatalf("pod %s: the sidecar says %q before the upgrade, want v1", name, got)
		}
		waitVersion(t, name, p.Status.PodIP, "v1")
	}

	setSidecarImage(t, c, set.Name, v2)
	t0 := time.Now()
	done := waitSidecarSet(t, c, set.Name, 2*time.Minute, "upgraded on every pod", func(s *appsv1beta1.SidecarSet) bool {
		return sidecarSetDone(replicas)(s) && s.Status.LatestRevision != first.Status.LatestRevision
	})
	t.Logf("SidecarSet reports %d pods updated and ready %.1fs after the image change (revision %s → %s)",
		replicas, time.Since(t0).Seconds(), first.Status.LatestRevision, done.Status.LatestRevision)

	// What updatedReadyPods promises must hold on the pods as they are now.
	after := listPods(t, cs, ns)
	if len(after) != replicas {
		t.Fatalf("%d pods after the upgrade, want %d", len(after), replicas)
	}
	for name, p := range after {
		b, ok := before[name]
		if !ok || b.UID != p.UID {
			t.Errorf("pod %s was recreated by a sidecar image change", name)
			continue
		}
		if got := specOf(p, "sidecar"); got == nil || got.Image != v2 {
			t.Errorf("pod %s: the sidecar's spec is %+v, want image %s", name, got, v2)
		}
		appB, appA := statusOf(b, "app"), statusOf(p, "app")
		if appA == nil || appA.ContainerID != appB.ContainerID || appA.RestartCount != 0 || appA.State.Running == nil {
			t.Errorf("pod %s: the app container was touched (container %s → %+v): %s", name, appB.ContainerID, appA, harness.DescribePod(p))
		}
		scB, scA := statusOf(b, "sidecar"), statusOf(p, "sidecar")
		if scA == nil || scA.RestartCount != 1 || scA.ContainerID == scB.ContainerID || scA.ImageID == scB.ImageID ||
			scA.State.Running == nil || !scA.Ready {
			t.Errorf("pod %s: the status reports it updated and ready, but the sidecar is not restarted once onto a new image, running and ready: %s",
				name, harness.DescribePod(p))
			continue
		}
		if got := execInContainer(t, sb, ns, name, "sidecar", "cat", "/etc/app-version"); got != "v2" {
			t.Errorf("pod %s: the sidecar says %q after the upgrade, want v2", name, got)
		}
		if got := execInContainer(t, sb, ns, name, "app", "cat", "/etc/app-version"); got != "v1" {
			t.Errorf("pod %s: the app container says %q after the sidecar upgrade, want v1", name, got)
		}
		waitVersion(t, name, p.Status.PodIP, "v2")
		if cond := harness.PodCondition(p, sidecarrules.UpgradableCondition); cond != corev1.ConditionTrue {
			t.Errorf("pod %s: %s is %s", name, sidecarrules.UpgradableCondition, cond)
		}
	}
}

func containerNames(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// answer is one request of the client to a hot-upgrade sidecar.
type answer struct {
	at      time.Time
	version string // "" when the request failed
	err     error
}

// sidecarSetHotUpgrade: a HotUpgrade sidecar `sidecar` (sidecar:v1, hotUpgradeEmptyImage
// sidecar:empty) is injected into a CloneSet pod on the real node as two copies, sidecar-1 serving
// and sidecar-2 asleep; while a client on the host asks the pod IP for the version every 20 ms, the
// image changes to sidecar:v2: sidecar-2 restarts onto v2 (it binds the shared port once it is
// free), sidecar-1 is then flipped to the empty image, and the client sees v1, then v2, never v1
// again. busybox's httpd cannot hand its listener over, so the requests that fail between the old
// copy stopping and the new one binding are counted and reported, not required to be zero. The pod
// and its app container are untouched throughout.
func sidecarSetHotUpgrade(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	v1, v2, empty := pushSidecarImages(t, sb)
	set := createRealSidecarSet(t, c, newRealSidecarSet(ns, "hot", appsv1beta1.SidecarSetContainer{
		Container: corev1.Container{Name: "sidecar", Image: v1},
		UpgradeStrategy: appsv1beta1.SidecarSetContainerUpgradeStrategy{
			UpgradeType: appsv1beta1.SidecarSetHotUpgrade, HotUpgradeEmptyImage: empty}}))
	clone := harness.NewCloneSet(ns, "hot", 1, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType,
		realPod("app", sb.Image("app:v1")).Spec)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "hot", "its pod ready with both copies", harness.RolledOut(1))
	first := waitSidecarSet(t, c, set.Name, 60*time.Second, "reports the pod", sidecarSetDone(1))
	var pod *corev1.Pod
	for _, p := range listPods(t, cs, ns) {
		pod = p
	}
	if got := containerNames(pod.Spec.Containers); !slices.Equal(got, []string{"sidecar-1", "sidecar-2", "app"}) {
		t.Fatalf("pod %s: containers %v, want [sidecar-1 sidecar-2 app]", pod.Name, got)
	}
	checkCopies(t, pod, "sidecar-1", v1, "sidecar-2", empty)
	ip := pod.Status.PodIP
	waitVersion(t, pod.Name, ip, "v1")

	// The client: one request every 20 ms, each waiting up to a second.
	var (
		mu      sync.Mutex
		answers []answer
	)
	stop := harness.Every(20*time.Millisecond, func() {
		v, err := askVersion(ip)
		mu.Lock()
		answers = append(answers, answer{at: time.Now(), version: v, err: err})
		mu.Unlock()
	})
	defer stop()
	// answered waits until the client has had 10 answers of version since a moment.
	answered := func(what, version string, since time.Time) {
		t.Helper()
		harness.Eventually(t, 30*time.Second, what, func() (bool, string) {
			mu.Lock()
			defer mu.Unlock()
			n := 0
			for _, a := range answers {
				if a.err == nil && a.version == version && a.at.After(since) {
					n++
				}
			}
			return n >= 10, fmt.Sprintf("%d answers %s", n, version)
		})
	}
	answered("the client answered by v1 before the upgrade", "v1", time.Now())
	setSidecarImage(t, c, set.Name, v2)
	t0 := time.Now()
	done := waitSidecarSet(t, c, set.Name, 2*time.Minute, "hot-upgraded and flipped", func(s *appsv1beta1.SidecarSet) bool {
		return sidecarSetDone(1)(s) && s.Status.LatestRevision != first.Status.LatestRevision
	})
	took := time.Since(t0)
	answered("the client answered by v2 after the flip", "v2", time.Now())
	stop()
	t.Logf("SidecarSet reports the pod hot-upgraded and flipped %.1fs after the image change (revision %s → %s)",
		took.Seconds(), first.Status.LatestRevision, done.Status.LatestRevision)

	after, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.UID != pod.UID {
		t.Fatalf("pod %s was recreated by a hot upgrade", pod.Name)
	}
	if a, b := statusOf(after, "app"), statusOf(pod, "app"); a == nil || a.ContainerID != b.ContainerID || a.RestartCount != 0 {
		t.Errorf("the app container was touched: %s", harness.DescribePod(after))
	}
	checkCopies(t, after, "sidecar-2", v2, "sidecar-1", empty)
	if got := execInContainer(t, sb, ns, pod.Name, "sidecar-2", "cat", "/etc/app-version"); got != "v2" {
		t.Errorf("the working copy sidecar-2 says %q, want v2", got)
	}
	kruiseExecSidecar(t, sb, ns, pod.Name, "sidecar", "sidecar-2", "cat /etc/app-version", "v2")
	// Each copy restarted once: sidecar-2 from the empty image onto v2, sidecar-1 from v1 onto the
	// empty image.
	for _, name := range []string{"sidecar-1", "sidecar-2"} {
		if st := statusOf(after, name); st == nil || st.RestartCount != 1 {
			t.Errorf("%s restarted %v times, want once: %s", name, st, harness.DescribePod(after))
		}
	}

	mu.Lock()
	defer mu.Unlock()
	var v1s, v2s, failed, v1AfterV2 int
	var firstV2, firstFail, lastFail time.Time
	var lastErr error
	for _, a := range answers {
		switch {
		case a.err != nil:
			failed++
			if firstFail.IsZero() {
				firstFail = a.at
			}
			lastFail, lastErr = a.at, a.err
		case a.version == "v1":
			v1s++
			if !firstV2.IsZero() {
				v1AfterV2++
			}
		case a.version == "v2":
			v2s++
			if firstV2.IsZero() {
				firstV2 = a.at
			}
		default:
			t.Errorf("the sidecar answered %q", a.version)
		}
	}
	t.Logf("%d requests through the hot upgrade: %d answered v1, %d answered v2, %d failed", len(answers), v1s, v2s, failed)
	if failed > 0 {
		t.Logf("failures from %s to %s after the image change (%.0f ms), the last: %v", firstFail.Sub(t0).Round(time.Millisecond),
			lastFail.Sub(t0).Round(time.Millisecond), lastFail.Sub(firstFail).Seconds()*1000, lastErr)
	}
	if v1s == 0 || v2s == 0 {
		t.Errorf("the client saw %d v1 and %d v2 answers; want both", v1s, v2s)
	}
	if v1AfterV2 > 0 {
		t.Errorf("%d requests answered v1 after the first v2 answer", v1AfterV2)
	}
	if last := answers[len(answers)-1]; last.version != "v2" {
		t.Errorf("the last request (%s after the image change) got %q (%v), want v2", last.at.Sub(t0).Round(time.Millisecond), last.version, last.err)
	}
}

// checkCopies checks that the pod's hot-upgrade annotation names working as the working copy of
// `sidecar`, which runs image workingImage, running and ready, and that idle runs idleImage.
func checkCopies(t *testing.T, p *corev1.Pod, working, workingImage, idle, idleImage string) {
	t.Helper()
	var names map[string]string
	if err := json.Unmarshal([]byte(p.Annotations[sidecarrules.WorkingHotUpgradeContainerAnnotation]), &names); err != nil || names["sidecar"] != working {
		t.Errorf("pod %s: %s = %q, want sidecar working as %s", p.Name, sidecarrules.WorkingHotUpgradeContainerAnnotation,
			p.Annotations[sidecarrules.WorkingHotUpgradeContainerAnnotation], working)
	}
	for name, image := range map[string]string{working: workingImage, idle: idleImage} {
		spec, st := specOf(p, name), statusOf(p, name)
		if spec == nil || spec.Image != image || st == nil || st.State.Running == nil || !st.Ready {
			t.Errorf("pod %s: %s does not run %s: %s", p.Name, name, image, harness.DescribePod(p))
		}
	}
}
