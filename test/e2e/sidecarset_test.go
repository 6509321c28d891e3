package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/webhook/sidecarinjection"
	"github.com/kruise-ng/kruise/test/harness"
)

// newSidecarSet selects the pods labelled app=app in namespace ns and injects one container.
func newSidecarSet(name, ns, app string, c corev1.Container, policy appsv1beta1.SidecarSetPodInjectPolicy) *appsv1beta1.SidecarSet {
	return &appsv1beta1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1beta1.SidecarSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				corev1.LabelMetadataName: ns}},
			Containers: []appsv1beta1.SidecarSetContainer{{Container: c, PodInjectPolicy: policy}},
		},
	}
}

// createSidecarSet creates s, deletes it with the test, and waits until its injection is
// registered (the registrar's annotation shows its generation).
func createSidecarSet(t *testing.T, c client.Client, s *appsv1beta1.SidecarSet) *appsv1beta1.SidecarSet {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), s) })
	return waitRegistered(t, c, s.Name)
}

// waitRegistered waits until SidecarSet name's current generation is registered.
func waitRegistered(t *testing.T, c client.Client, name string) *appsv1beta1.SidecarSet {
	t.Helper()
	got := &appsv1beta1.SidecarSet{}
	harness.Eventually(t, 30*time.Second, "SidecarSet "+name+" registered", func() (bool, string) {
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, got); err != nil {
			return false, err.Error()
		}
		have := got.Annotations[sidecarrules.RegisteredAnnotation]
		return have == strconv.FormatInt(got.Generation, 10), fmt.Sprintf("generation %d, registered %q", got.Generation, have)
	})
	return got
}

func containerNames(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func injectedEnv(c *corev1.Container) bool {
	return slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == sidecarrules.InjectedEnv && e.Value == "true" })
}

// Two SidecarSets select a CloneSet's pods: each pod is created with both sidecars — one before
// the app container, one after it — marked IS_INJECTED, with the SidecarSets' volume, and the
// hash and injected-list annotations as OpenKruise writes them; a pod neither selects is left as
// it is.
func TestSidecarSetInjectsAtCreation(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	logs := newSidecarSet("log-"+ns, ns, "web", corev1.Container{Name: "log", Image: "registry.example/log:v1",
		VolumeMounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/var/log/app"}}}, appsv1beta1.SidecarSetBeforeAppContainer)
	logs.Spec.Volumes = []corev1.Volume{{Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	proxy := newSidecarSet("proxy-"+ns, ns, "web", corev1.Container{Name: "proxy", Image: "registry.example/proxy:v1"},
		appsv1beta1.SidecarSetAfterAppContainer)
	logs = createSidecarSet(t, c, logs)
	proxy = createSidecarSet(t, c, proxy)
	// The registration is written once per change, not over and over.
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	generation := func() int64 {
		if err := c.Get(ctx, client.ObjectKey{Name: install.SidecarInjectionConfiguration}, cfg); err != nil {
			t.Fatal(err)
		}
		return cfg.Generation
	}
	registered := generation()
	harness.Consistently(t, 2*time.Second, "the injection configuration stays as registered", func() (bool, string) {
		g := generation()
		return g == registered, fmt.Sprintf("generation %d, then %d", registered, g)
	})

	const replicas = 3
	clone := newCloneSet(ns, "web", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "web", "all ready", harness.RolledOut(replicas))
	pods := podsByName(t, ns, "app=web")
	if len(pods) != replicas {
		t.Fatalf("%d pods, want %d", len(pods), replicas)
	}
	for name, p := range pods {
		if got, want := containerNames(p.Spec.Containers), []string{"log", "app", "proxy"}; !slices.Equal(got, want) {
			t.Errorf("pod %s: containers %v, want %v", name, got, want)
			continue
		}
		for i := range p.Spec.Containers {
			if c := &p.Spec.Containers[i]; injectedEnv(c) != (c.Name != "app") {
				t.Errorf("pod %s: container %s has IS_INJECTED=%v", name, c.Name, injectedEnv(c))
			}
		}
		if !slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "logs" }) {
			t.Errorf("pod %s: no volume logs", name)
		}
		if got, want := p.Annotations[sidecarrules.InjectedListAnnotation], strings.Join([]string{logs.Name, proxy.Name}, ","); got != want {
			t.Errorf("pod %s: %s = %q, want %q", name, sidecarrules.InjectedListAnnotation, got, want)
		}
		specs, err := sidecarrules.PodUpgradeSpecs(p, sidecarrules.HashAnnotation)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []*appsv1beta1.SidecarSet{logs, proxy} {
			want, err := sidecarrules.SetHash(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := specs[s.Name]; got.Hash != want || got.SidecarSetName != s.Name {
				t.Errorf("pod %s: hash entry of %s = %+v, want hash %s", name, s.Name, got, want)
			}
		}
	}

	// A pod of the namespace that neither SidecarSet selects.
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns, Labels: map[string]string{"app": "other"}},
		Spec: podSpec("registry.example/app:v1")}
	got, err := cs.CoreV1().Pods(ns).Create(ctx, plain, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if names := containerNames(got.Spec.Containers); !slices.Equal(names, []string{"app"}) {
		t.Errorf("unselected pod: containers %v, want [app]", names)
	}
	if _, ok := got.Annotations[sidecarrules.InjectedListAnnotation]; ok {
		t.Errorf("unselected pod carries %s", sidecarrules.InjectedListAnnotation)
	}

	// Injection paused: the registration goes, and new pods get no sidecar of that SidecarSet.
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"injectionStrategy":{"paused":true}}}`))
	if err := c.Patch(ctx, proxy, patch); err != nil {
		t.Fatal(err)
	}
	waitRegistered(t, c, proxy.Name)
	paused := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "paused", Namespace: ns, Labels: map[string]string{"app": "web"}},
		Spec: podSpec("registry.example/app:v1")}
	if got, err = cs.CoreV1().Pods(ns).Create(ctx, paused, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if names := containerNames(got.Spec.Containers); !slices.Equal(names, []string{"log", "app"}) {
		t.Errorf("pod created while %s is paused: containers %v, want [log app]", proxy.Name, names)
	}
}

// B1: with kruise-manager down, pods that no SidecarSet selects are created, deleted and evicted
// (in a namespace without a PodUnavailableBudget) as if Kruise were not installed, while a pod that must get a sidecar is refused with a message naming
// its SidecarSet — never created without it; once the manager is back the same pod is created
// with its sidecar.
func TestSidecarSetOutageBlocksOnlySelectedPods(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	guard := createSidecarSet(t, c, newSidecarSet("guard-"+ns, ns, "guarded",
		corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}, appsv1beta1.SidecarSetBeforeAppContainer))
	guarded := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: ns, Labels: map[string]string{"app": "guarded"}},
			Spec: podSpec("registry.example/app:v1")}
	}
	const unrelated = 50
	var took time.Duration
	// A pod to evict during the outage, in a namespace without a PodUnavailableBudget.
	evictable := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "evictable", Namespace: ns, Labels: map[string]string{"app": "plain"}},
		Spec: podSpec("registry.example/app:v1")}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, evictable, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := sb.WithoutKruiseManager(ctx, func() error {
		t0 := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, 2*unrelated)
		for i := range unrelated {
			wg.Go(func() {
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("plain-%d", i), Namespace: ns,
					Labels: map[string]string{"app": "plain"}}, Spec: podSpec("registry.example/app:v1")}
				if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("create %s: %w", p.Name, err)
					return
				}
				if err := cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
					errs <- fmt.Errorf("delete %s: %w", p.Name, err)
				}
			})
		}
		wg.Wait()
		took = time.Since(t0)
		close(errs)
		for err := range errs {
			return fmt.Errorf("an unrelated pod was blocked by the outage: %w", err)
		}
		if err := cs.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "evictable"}}); err != nil {
			return fmt.Errorf("eviction of an unrelated pod in a namespace without a budget failed during the outage: %w", err)
		}
		_, err := cs.CoreV1().Pods(ns).Create(ctx, guarded(), metav1.CreateOptions{})
		switch {
		case err == nil:
			return fmt.Errorf("pod guarded was created during the outage, without its sidecar")
		case !strings.Contains(err.Error(), sidecarinjection.EntryName(guard.Name)):
			return fmt.Errorf("pod guarded refused with %q, which does not name SidecarSet %s", err, guard.Name)
		}
		t.Logf("during the outage: %d unrelated pods created and deleted in %.1fs; guarded refused: %v", unrelated, took.Seconds(), err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	harness.Eventually(t, 30*time.Second, "pod guarded created once the manager is back", func() (bool, string) {
		var err error
		got, err = cs.CoreV1().Pods(ns).Create(ctx, guarded(), metav1.CreateOptions{})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	if names := containerNames(got.Spec.Containers); !slices.Equal(names, []string{"agent", "app"}) {
		t.Errorf("pod guarded: containers %v, want [agent app]", names)
	}
}

// waitSidecarSet waits until SidecarSet name meets cond.
func waitSidecarSet(t *testing.T, c client.Client, name, what string, cond func(*appsv1beta1.SidecarSet) bool) *appsv1beta1.SidecarSet {
	t.Helper()
	got := &appsv1beta1.SidecarSet{}
	harness.Eventually(t, 90*time.Second, "SidecarSet "+name+" "+what, func() (bool, string) {
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, got); err != nil {
			return false, err.Error()
		}
		return got.Status.ObservedGeneration == got.Generation && cond(got), fmt.Sprintf("%+v", got.Status)
	})
	return got
}

func sidecarImages(t *testing.T, ns, selector, container string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, p := range podsByName(t, ns, selector) {
		for _, c := range p.Spec.Containers {
			if c.Name == container {
				out[c.Image]++
			}
		}
	}
	return out
}

// A new sidecar image rolls into a CloneSet's pods in place: partition keeps pods at the old
// image, maxUnavailable bounds the pods upgrading at a time, paused stops the rollout, the app
// containers never restart and every pod keeps its UID; a change beyond images leaves the pods
// as they are, marked SidecarSetUpgradable=False.
func TestSidecarSetUpgradesInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newSidecarSet("up-"+ns, ns, "up", corev1.Container{Name: "log", Image: "registry.example/log:v1"}, "")
	set.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromInt32(2))
	set.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString("50%"))
	set = createSidecarSet(t, c, set)
	const replicas = 6
	clone := newCloneSet(ns, "up", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "up", "all ready", harness.RolledOut(replicas))
	first := waitSidecarSet(t, c, set.Name, "matches the pods", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == replicas && s.Status.UpdatedReadyPods == replicas
	})
	before := podsByName(t, ns, "app=up")

	var peak int
	notReady, stop := watchNotReady(t, ns, "app=up")
	patchSet := func(patch string) {
		t.Helper()
		if err := c.Patch(ctx, set, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	patchSet(`{"spec":{"containers":[{"name":"log","image":"registry.example/log:v2"}]}}`)
	done := waitSidecarSet(t, c, set.Name, "4 pods upgraded (partition 2)", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.UpdatedPods == replicas-2 && s.Status.UpdatedReadyPods == replicas-2 && s.Status.ReadyPods == replicas
	})
	if done.Status.LatestRevision == first.Status.LatestRevision {
		t.Errorf("latestRevision stayed %s after an image change", done.Status.LatestRevision)
	}
	harness.Consistently(t, 2*time.Second, "partition 2 holds", func() (bool, string) {
		n := sidecarImages(t, ns, "app=up", "log")
		return n["registry.example/log:v1"] == 2, fmt.Sprint(n)
	})
	patchSet(`{"spec":{"updateStrategy":{"paused":true,"partition":0}}}`)
	harness.Consistently(t, 2*time.Second, "paused holds", func() (bool, string) {
		n := sidecarImages(t, ns, "app=up", "log")
		return n["registry.example/log:v1"] == 2, fmt.Sprint(n)
	})
	patchSet(`{"spec":{"updateStrategy":{"paused":false}}}`)
	waitSidecarSet(t, c, set.Name, "all pods upgraded", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.UpdatedReadyPods == replicas
	})
	stop()
	if peak = notReady(); peak > replicas/2 {
		t.Errorf("%d pods NotReady at once; maxUnavailable is 50%% (%d)", peak, replicas/2)
	}
	for name, p := range podsByName(t, ns, "app=up") {
		old := before[name]
		if old == nil || old.UID != p.UID {
			t.Errorf("pod %s was recreated", name)
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			switch {
			case cs.Name == "app" && cs.RestartCount != 0:
				t.Errorf("pod %s: the app container restarted %d times", name, cs.RestartCount)
			case cs.Name == "log" && (cs.RestartCount != 1 || cs.Image != "registry.example/log:v2"):
				t.Errorf("pod %s: sidecar restarted %d times, runs %s", name, cs.RestartCount, cs.Image)
			}
		}
		if condition(p, sidecarrules.UpgradableCondition) != corev1.ConditionTrue {
			t.Errorf("pod %s: %s is not True: %s", name, sidecarrules.UpgradableCondition, describe(p))
		}
		if _, ok := p.Annotations[sidecarrules.InplaceUpdateStateAnnotation]; !ok {
			t.Errorf("pod %s: no %s", name, sidecarrules.InplaceUpdateStateAnnotation)
		}
	}

	// More than an image: nothing can change in place.
	patchSet(`{"spec":{"containers":[{"name":"log","image":"registry.example/log:v3","env":[{"name":"LEVEL","value":"debug"}]}]}}`)
	harness.Eventually(t, 60*time.Second, "pods marked not upgradable", func() (bool, string) {
		n := 0
		for _, p := range podsByName(t, ns, "app=up") {
			if condition(p, sidecarrules.UpgradableCondition) == corev1.ConditionFalse {
				n++
			}
		}
		return n == replicas, fmt.Sprintf("%d of %d", n, replicas)
	})
	if n := sidecarImages(t, ns, "app=up", "log"); n["registry.example/log:v2"] != replicas {
		t.Errorf("sidecar images %v after a change beyond images; want all still at v2", n)
	}
	got := waitSidecarSet(t, c, set.Name, "reports no pod updated", func(s *appsv1beta1.SidecarSet) bool { return s.Status.UpdatedPods == 0 })
	if got.Status.MatchedPods != replicas || got.Status.ReadyPods != replicas {
		t.Errorf("status %+v", got.Status)
	}
}
