package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/webhook/sidecarinjection"
	"github.com/kruise-ng/kruise/test/harness"
)

// manifest is objects as one YAML file, in order, as a user writes an application's manifests.
func manifest(t *testing.T, objs ...runtime.Object) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, o := range objs {
		raw, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("---\n")
		out.Write(raw)
	}
	return out.Bytes()
}

// kubectlApply runs `kubectl apply -f -` with file against the sandbox, as a user would.
func kubectlApply(t *testing.T, file []byte) {
	t.Helper()
	cmd := exec.Command(filepath.Join(harness.BinDir(), "kubectl"), "--kubeconfig", sb.Kubeconfig(), "apply", "-f", "-")
	cmd.Stdin = bytes.NewReader(file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s\nof\n%s", err, out, file)
	}
}

// agentSidecarSet selects the pods labelled app=app in the namespaces labelled team=team.
func agentSidecarSet(name, app, team string) *appsv1beta1.SidecarSet {
	s := newSidecarSet(name, "", app, corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}, appsv1beta1.SidecarSetBeforeAppContainer)
	s.TypeMeta = metav1.TypeMeta{APIVersion: appsv1beta1.GroupVersion.String(), Kind: "SidecarSet"}
	s.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": team}}
	return s
}

func bareAppPod(ns, name, app string) *corev1.Pod {
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": app}},
		Spec:       podSpec("registry.example/app:v1")}
}

// teamNamespace is a test namespace labelled team=team.
func teamNamespace(t *testing.T, team string) string {
	t.Helper()
	ns := namespace(t)
	patch := fmt.Sprintf(`{"metadata":{"labels":{"team":%q}}}`, team)
	if _, err := cs.CoreV1().Namespaces().Patch(context.Background(), ns, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// appliedWithSidecar applies set and pod in one file and says whether the pod got the sidecar.
func appliedWithSidecar(t *testing.T, set *appsv1beta1.SidecarSet, pod *corev1.Pod) bool {
	t.Helper()
	kubectlApply(t, manifest(t, set, pod))
	got, err := cs.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return hasAgent(got)
}

func hasAgent(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == "agent" })
}

// sidecarWebhookCalls is how many calls the SidecarSet entries have made to kruise-manager.
func sidecarWebhookCalls(t *testing.T) float64 {
	t.Helper()
	var total float64
	for _, m := range scrape(t)["controller_runtime_webhook_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "webhook" && l.GetValue() == sidecarinjection.PathPrefix {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// Issue 39: a SidecarSet applied in one file with the pods it selects — the usual way an
// application is deployed — injects every one of them, without waiting for anything: 100
// consecutive `kubectl apply` of a SidecarSet and a pod it selects (new names each time) give
// 100 pods with the sidecar; so do SidecarSets applied with a CloneSet of 5, and updates that
// move a SidecarSet's selector or namespace selector to the pod applied with them. The entries
// still keep the pods no SidecarSet selects off the webhook.
func TestSidecarSetAppliedWithItsPods(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	team := "t-" + namespace(t)
	ns := teamNamespace(t, team)
	const runs = 100
	calls := sidecarWebhookCalls(t)
	var missed []string
	for i := range runs {
		set := agentSidecarSet(fmt.Sprintf("w%d-%s", i, ns), fmt.Sprintf("w%d", i), team)
		if p := bareAppPod(ns, fmt.Sprintf("w%d", i), fmt.Sprintf("w%d", i)); !appliedWithSidecar(t, set, p) {
			missed = append(missed, p.Name)
		}
		if err := c.Delete(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	tally(t, "SidecarSet and pod in one file: pods injected", runs, missed)
	if got := sidecarWebhookCalls(t) - calls; got < runs {
		t.Errorf("the SidecarSet entries were called %v times for %d selected pods", got, runs)
	}

	// Pods no SidecarSet selects never call the entries.
	calls = sidecarWebhookCalls(t)
	for i := range 20 {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, bareAppPod(ns, fmt.Sprintf("plain-%d", i), "plain"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := sidecarWebhookCalls(t) - calls; got != 0 {
		t.Errorf("20 pods no SidecarSet selects made %v calls to the SidecarSet entries, want 0", got)
	}

	// What the registration costs (logged, never asserted): a SidecarSet's create waits for its
	// entry; the create of the pod right after it, and of a pod no SidecarSet selects, do not.
	cfg, err := sb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 100, 200 // no client-side throttling in what is timed
	c = harness.KruiseClient(t, cfg)
	var setTook, podTook, plainTook []time.Duration
	for i := range 50 {
		set := agentSidecarSet(fmt.Sprintf("lat%d-%s", i, ns), fmt.Sprintf("lat%d", i), team)
		t0 := time.Now()
		if err := c.Create(ctx, set); err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		p, err := cs.CoreV1().Pods(ns).Create(ctx, bareAppPod(ns, fmt.Sprintf("lat%d", i), fmt.Sprintf("lat%d", i)), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t2 := time.Now()
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, bareAppPod(ns, fmt.Sprintf("plain-lat%d", i), "plain"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		setTook, podTook, plainTook = append(setTook, t1.Sub(t0)), append(podTook, t2.Sub(t1)), append(plainTook, time.Since(t2))
		if !hasAgent(p) {
			t.Errorf("pod %s created right after its SidecarSet has no sidecar", p.Name)
		}
		if err := c.Delete(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("create latency p50/p99: SidecarSet %v/%v; the pod it selects, right after %v/%v; a pod no SidecarSet selects %v/%v",
		quantile(setTook, 0.5), quantile(setTook, 0.99), quantile(podTook, 0.5), quantile(podTook, 0.99), quantile(plainTook, 0.5), quantile(plainTook, 0.99))
}

// tally logs how many of total runs went as they must and fails the test naming the others.
func tally(t *testing.T, what string, total int, failed []string) {
	t.Helper()
	t.Logf("%s: %d / %d", what, total-len(failed), total)
	if len(failed) > 0 {
		t.Errorf("%s: %d / %d; not: %v", what, total-len(failed), total, failed)
	}
}

// quantile is the q-quantile of ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))].Round(100 * time.Microsecond)
}

// Issue 39: a SidecarSet applied in one file with a CloneSet of 5 injects every pod of it.
func TestSidecarSetAppliedWithItsCloneSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	team := "t-" + namespace(t)
	ns := teamNamespace(t, team)
	const runs = 10
	total, missed := 0, []string{}
	for i := range runs {
		app := fmt.Sprintf("cs%d", i)
		set := agentSidecarSet(fmt.Sprintf("cs%d-%s", i, ns), app, team)
		cloneSet := harness.NewCloneSet(ns, app, 5, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, podSpec("registry.example/app:v1"))
		cloneSet.TypeMeta = metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "CloneSet"}
		cloneSet.Spec.Selector.MatchLabels["app"] = app
		cloneSet.Spec.Template.Labels["app"] = app
		kubectlApply(t, manifest(t, set, cloneSet))
		var pods map[string]*corev1.Pod
		harness.Eventually(t, 60*time.Second, "CloneSet "+app+" creates 5 pods", func() (bool, string) {
			pods = podsByName(t, ns, "app="+app)
			return len(pods) == 5, fmt.Sprintf("%d pods", len(pods))
		})
		for _, p := range pods {
			total++
			if !hasAgent(p) {
				missed = append(missed, p.Name)
			}
		}
		if err := c.Delete(ctx, cloneSet); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	tally(t, "SidecarSet and CloneSet of 5 in one file: pods injected", total, missed)
}

// Issue 39: an update that moves a SidecarSet's selector, or widens its namespace selector, to
// the pods applied after it in the same file injects them.
func TestSidecarSetSelectorUpdateAppliedWithItsPods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	team := "t-" + namespace(t)
	ns := teamNamespace(t, team)
	name := "moving-" + ns
	if err := c.Create(ctx, agentSidecarSet(name, "none", team)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &appsv1beta1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	const runs = 100
	var missed []string
	for i := range runs {
		app := fmt.Sprintf("u%d", i)
		if !appliedWithSidecar(t, agentSidecarSet(name, app, team), bareAppPod(ns, app, app)) {
			missed = append(missed, app)
		}
	}
	tally(t, "selector updated with the pod in one file: pods injected", runs, missed)

	// The namespace selector widened to a new team's namespace, applied with a pod there.
	missed = nil
	const teams = 10
	for i := range teams {
		other := fmt.Sprintf("%s-%d", team, i)
		otherNS := teamNamespace(t, other)
		set := agentSidecarSet(name, "wide", team)
		set.Spec.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{team, other}}}}
		if !appliedWithSidecar(t, set, bareAppPod(otherNS, "wide", "wide")) {
			missed = append(missed, otherNS+"/wide")
		}
	}
	tally(t, "namespace selector widened with the pod in one file: pods injected", teams, missed)
}

// Issue 39: a selected pod created right after its SidecarSet's create returned is refused while
// kruise-manager is down — never created without its sidecar — with no wait for the registrar.
func TestSidecarSetJustCreatedOutageRefusesSelectedPods(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newSidecarSet("fresh-"+ns, ns, "fresh", corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}, appsv1beta1.SidecarSetBeforeAppContainer)
	var entry string
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), set) })
	err := sb.WithoutKruiseManager(ctx, func() error {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, bareAppPod(ns, "fresh", "fresh"), metav1.CreateOptions{})
		if err == nil {
			return fmt.Errorf("pod fresh was created during the outage, without its sidecar")
		}
		if !strings.Contains(err.Error(), ".sidecarset.") || !strings.Contains(err.Error(), set.Name) {
			return fmt.Errorf("pod fresh refused with %q, which does not name SidecarSet %s", err, set.Name)
		}
		entry = err.Error()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("refused during the outage: %s", entry)
}

// Issue 39: a SidecarSet says whether the pods it selects are sent to Kruise (the condition
// InjectionRegistered, shown by `kubectl get sidecarset`), and reports the pods it selects that
// run without its sidecars — here one created while its injection was paused — with a count in
// its status and an event on the pod.
func TestSidecarSetReportsPodsWithoutItsSidecars(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newSidecarSet("late-"+ns, ns, "late", corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}, appsv1beta1.SidecarSetBeforeAppContainer)
	set.Spec.InjectionStrategy.Paused = true
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), set) })
	registered := func(s *appsv1beta1.SidecarSet) *metav1.Condition {
		return meta.FindStatusCondition(s.Status.Conditions, appsv1beta1.SidecarSetInjectionRegistered)
	}
	waitSidecarSet(t, c, set.Name, "not registered while paused", func(s *appsv1beta1.SidecarSet) bool {
		cond := registered(s)
		return cond != nil && cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, "paused")
	})
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, bareAppPod(ns, "late", "late"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hasAgent(pod) {
		t.Fatal("a pod created while the injection was paused got the sidecar")
	}
	got := waitSidecarSet(t, c, set.Name, "counting the pod created while paused", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.NotInjectedPods == 1
	})
	got.Spec.InjectionStrategy.Paused = false
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	waitSidecarSet(t, c, set.Name, "registered once resumed, still counting the pod", func(s *appsv1beta1.SidecarSet) bool {
		cond := registered(s)
		return cond != nil && cond.Status == metav1.ConditionTrue && s.Status.NotInjectedPods == 1
	})
	harness.Eventually(t, 30*time.Second, "an event on the pod without the sidecar", func() (bool, string) {
		evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=late"})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range evs.Items {
			seen = append(seen, e.Reason)
			if e.Reason == "SidecarSetNotInjected" && strings.Contains(e.Note, set.Name) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("events %v", seen)
	})
	out, err := exec.Command(filepath.Join(harness.BinDir(), "kubectl"), "--kubeconfig", sb.Kubeconfig(), "get", "sidecarset", set.Name).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get sidecarset: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "REGISTERED") || !strings.Contains(lines[0], "NOT-INJECTED") ||
		!strings.Contains(lines[1], "True") {
		t.Errorf("kubectl get sidecarset shows:\n%s", out)
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "late", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitSidecarSet(t, c, set.Name, "no pod left without the sidecar once it is gone", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.NotInjectedPods == 0
	})
}

// Issue 39: when the entry of a new SidecarSet cannot be registered — here its webhook
// configuration is gone — the create is refused with a message saying why, instead of storing
// a SidecarSet whose pods would miss their sidecars; once the configuration is back, it is
// accepted.
func TestSidecarSetRefusedWhenItsEntryCannotBeRegistered(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: install.SidecarInjectionConfiguration}, cfg); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore := func() {
		if restored {
			return
		}
		restored = true
		back := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: cfg.Name, Labels: cfg.Labels}}
		if err := c.Create(context.Background(), back); err != nil {
			t.Fatalf("restore %s: %v", cfg.Name, err)
		}
	}
	t.Cleanup(restore)
	set := newSidecarSet("unreg-"+ns, ns, "unreg", corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}, appsv1beta1.SidecarSetBeforeAppContainer)
	err := c.Create(ctx, set.DeepCopy())
	if err == nil {
		_ = c.Delete(ctx, set)
		t.Fatal("a SidecarSet was accepted while its injection entry could not be registered")
	}
	if !strings.Contains(err.Error(), set.Name) || !strings.Contains(err.Error(), install.SidecarInjectionConfiguration) {
		t.Errorf("refused with %q, which names neither the SidecarSet nor the missing configuration", err)
	}
	t.Logf("refused: %v", err)
	restore()
	harness.Eventually(t, 30*time.Second, "SidecarSet accepted once the configuration is back", func() (bool, string) {
		if err := c.Create(ctx, set.DeepCopy()); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	t.Cleanup(func() { _ = c.Delete(context.Background(), set) })
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, bareAppPod(ns, "unreg", "unreg"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasAgent(pod) {
		t.Error("a pod created after the SidecarSet was accepted has no sidecar")
	}
}
