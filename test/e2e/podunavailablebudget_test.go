package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/webhook/budgetguard"
	"github.com/kruise-ng/kruise/test/harness"
)

// maxOneBudget guards the total pods labelled app=app, letting one of them out of service.
func maxOneBudget(ns, name, app string, total int) *policyv1alpha1.PodUnavailableBudget {
	return &policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Annotations: map[string]string{policyv1alpha1.PubProtectTotalReplicasAnnotation: strconv.Itoa(total)}},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			MaxUnavailable: ptr.To(intstr.FromInt32(1))}}
}

func waitBudget(t *testing.T, c client.Client, ns, name, what string, cond func(*policyv1alpha1.PodUnavailableBudget) bool) *policyv1alpha1.PodUnavailableBudget {
	t.Helper()
	got := &policyv1alpha1.PodUnavailableBudget{}
	harness.Eventually(t, 60*time.Second, "PodUnavailableBudget "+name+" "+what, func() (bool, string) {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, got); err != nil {
			return false, err.Error()
		}
		return got.Status.ObservedGeneration == got.Generation && cond(got), fmt.Sprintf("%+v", got.Status)
	})
	return got
}

// A PodUnavailableBudget over a CloneSet (targetRef) counts its pods and replicas and marks each
// pod with kruise.io/related-pub.
func TestPodUnavailableBudgetCountsAWorkload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas = 4
	clone := newCloneSet(ns, "counted", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "counted", "all ready", harness.RolledOut(replicas))
	pub := &policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "counted"},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{
			TargetReference: &policyv1alpha1.PodUnavailableBudgetTargetReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "counted"},
			MinAvailable:    ptr.To(intstr.FromString("50%"))}}
	if err := c.Create(ctx, pub); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, c, ns, "counted", "counts the pods", func(p *policyv1alpha1.PodUnavailableBudget) bool {
		return p.Status.TotalReplicas == replicas && p.Status.DesiredAvailable == replicas/2 &&
			p.Status.CurrentAvailable == replicas && p.Status.UnavailableAllowed == replicas/2
	})
	harness.Eventually(t, 30*time.Second, "pods annotated with their budget", func() (bool, string) {
		for name, p := range podsByName(t, ns, "app=counted") {
			if p.Annotations[policyv1alpha1.PodRelatedPubAnnotation] != "counted" {
				return false, name + " not annotated"
			}
		}
		return true, ""
	})
	patchCloneSet(t, c, clone, `{"spec":{"replicas":2}}`)
	waitBudget(t, c, ns, "counted", "follows the scale-in", func(p *policyv1alpha1.PodUnavailableBudget) bool {
		return p.Status.TotalReplicas == 2 && p.Status.DesiredAvailable == 1 && p.Status.CurrentAvailable == 2
	})

	// A kind the finder does not know is read through its scale subresource.
	rcLabels := map[string]string{"app": "legacy"}
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy"},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](3), Selector: rcLabels,
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: rcLabels}, Spec: podSpec("registry.example/app:v1")}}}
	if _, err := cs.CoreV1().ReplicationControllers(ns).Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	legacy := &policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy"},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{
			TargetReference: &policyv1alpha1.PodUnavailableBudgetTargetReference{APIVersion: "v1", Kind: "ReplicationController", Name: "legacy"},
			MaxUnavailable:  ptr.To(intstr.FromInt32(1))}}
	if err := c.Create(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, c, ns, "legacy", "counts a ReplicationController's pods", func(p *policyv1alpha1.PodUnavailableBudget) bool {
		return p.Status.TotalReplicas == 3 && p.Status.DesiredAvailable == 2 && p.Status.CurrentAvailable == 3
	})
}

// A PodUnavailableBudget with maxUnavailable 1 over 4 pods (selector, protect-total-replicas 4):
// one pod's deletion goes through and is recorded; with 3 left, a second deletion is refused (403)
// and an eviction answers 429 ("retry later"), as a PodDisruptionBudget does, so kubectl drain retries (B3); once a fourth
// pod is ready again, an eviction goes through. A pod marked pub.kruise.io/no-protect is deleted
// whatever the budget.
func TestPodUnavailableBudgetGuardsDeletionsAndEvictions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	newPod := func(name string) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "guarded"}},
			Spec: podSpec("registry.example/app:v1")}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPod(t, ns, name, "ready", func(p *corev1.Pod) bool { return condition(p, corev1.PodReady) == corev1.ConditionTrue })
	}
	names := []string{"a", "b", "c", "d"}
	for _, n := range names {
		newPod(n)
	}
	pub := maxOneBudget(ns, "guard", "guarded", 4)
	if err := c.Create(ctx, pub); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, c, ns, "guard", "counts the pods", func(p *policyv1alpha1.PodUnavailableBudget) bool {
		return p.Status.TotalReplicas == 4 && p.Status.DesiredAvailable == 3 && p.Status.CurrentAvailable == 4 && p.Status.UnavailableAllowed == 1
	})
	t0 := time.Now()
	// The entries must be registered before the first deletion counts on them.
	waitBudgetEntries(t, c, ns, "guard")
	t.Logf("registered after %.1fs", time.Since(t0).Seconds())
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("first deletion refused: %v", err)
	}
	err := cs.CoreV1().Pods(ns).Delete(ctx, "b", metav1.DeleteOptions{})
	// OpenKruise's words, which scripts match, beside Kruise's own.
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "pub unavailable allowed is negative") {
		t.Fatalf("second deletion: %v; want 403 Forbidden with OpenKruise's words", err)
	}
	t.Logf("second deletion refused: %v", err)
	err = cs.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}})
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("eviction beyond the budget: %v; want 429", err)
	}
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != http.StatusTooManyRequests ||
		!strings.Contains(status.Status().Message, "retry later") {
		t.Errorf("refused eviction: %v", err)
	}
	fams := scrape(t) // OpenKruise's metric: the refusals by workload (none: "unknown" and the pod's name)
	for _, pod := range []string{"b", "c"} {
		if v := metricValue(fams, "pod_unavailable_budget", map[string]string{"kind_namespace_name": "unknown_" + ns + "_" + pod}); v < 1 {
			t.Errorf("pod_unavailable_budget of pod %s is %v, want its refusal counted", pod, v)
		}
	}
	t.Logf("refusals checked after %.1fs", time.Since(t0).Seconds())
	newPod("e")
	t.Logf("pod e ready after %.1fs", time.Since(t0).Seconds())
	waitBudget(t, c, ns, "guard", "available again", func(p *policyv1alpha1.PodUnavailableBudget) bool {
		return p.Status.CurrentAvailable == 4 && p.Status.UnavailableAllowed == 1
	})
	t.Logf("budget available again after %.1fs", time.Since(t0).Seconds())
	if err := cs.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"}}); err != nil {
		t.Fatalf("eviction within the budget refused: %v", err)
	}
	// No protection for a pod marked so.
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"`+policyv1alpha1.PodPubNoProtectionAnnotation+`":"true"}}}`))
	if err := c.Patch(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}}, patch); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "c", metav1.DeleteOptions{}); err != nil {
		t.Errorf("deletion of a no-protect pod refused: %v", err)
	}
}

// B2: a CloneSet rolled in place with maxUnavailable 100% under a budget of maxUnavailable 1 never
// has more than one pod out of service: the in-place engine asks the budget before it takes each
// pod out of service, and the pods it holds back wait (event WaitingForPodUnavailableBudget) until
// the budget frees; every pod is updated in the end, in place.
func TestPodUnavailableBudgetGuardsInPlaceUpdates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas = 6
	clone := newCloneSet(ns, "rolled", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromString("100%"))
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "rolled", "all ready", harness.RolledOut(replicas))
	pub := &policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rolled"},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "rolled"}},
			MaxUnavailable: ptr.To(intstr.FromInt32(1))}}
	if err := c.Create(ctx, pub); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, c, ns, "rolled", "counts the pods", func(p *policyv1alpha1.PodUnavailableBudget) bool {
		return p.Status.CurrentAvailable == replicas && p.Status.UnavailableAllowed == 1
	})
	before := podsByName(t, ns, "app=rolled")
	notReady, stop := watchNotReady(t, ns, "app=rolled")
	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	t0 := time.Now()
	waitCloneSet(t, c, ns, "rolled", "rolled out in place", harness.RolledOut(replicas))
	stop()
	t.Logf("%d pods rolled in place under the budget in %.1fs", replicas, time.Since(t0).Seconds())
	if peak := notReady(); peak > 1 {
		t.Errorf("%d pods NotReady at once; the budget allows 1", peak)
	}
	for name, p := range podsByName(t, ns, "app=rolled") {
		if old := before[name]; old == nil || old.UID != p.UID {
			t.Errorf("pod %s was recreated", name)
		}
	}
	evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waited := false
	for _, e := range evs.Items {
		waited = waited || e.Reason == "WaitingForPodUnavailableBudget"
	}
	if !waited {
		t.Errorf("no WaitingForPodUnavailableBudget event: the budget never held an update back")
	}
}

// waitBudgetEntries waits until the budget's entry and its namespace's eviction entry are
// registered: a deletion or eviction counts on them.
func waitBudgetEntries(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	harness.Eventually(t, 30*time.Second, "budget webhook registered", func() (bool, string) {
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: install.BudgetProtectionConfiguration}, cfg); err != nil {
			return false, err.Error()
		}
		n := 0
		for _, w := range cfg.Webhooks {
			if w.Name == budgetguard.EntryName(ns, name) || w.Name == budgetguard.EvictionEntryName(ns) {
				n++
			}
		}
		return n == 2, fmt.Sprintf("%d of 2 entries", n)
	})
}

// A ContainerRecreateRequest is a disruption its pod's budget is asked for, as an in-place update
// is: with one pod allowed out of service, the first restart is admitted and recorded in
// unavailablePods, the next refused with 429 naming the budget (kubectl-kruise restart waits on
// it), and let through once the budget frees (here the record's timeout: kwok's pods never
// restart, so the first pod never leaves service).
func TestPodUnavailableBudgetGuardsRestarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	pods := ejRunningPods(t, ns, "restarted", 3)
	pub := maxOneBudget(ns, "restarts", "restarted", 3)
	if err := c.Create(ctx, pub); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, c, ns, "restarts", "counts the pods", func(p *policyv1alpha1.PodUnavailableBudget) bool {
		return p.Status.CurrentAvailable == 3 && p.Status.UnavailableAllowed == 1
	})
	restart := func(pod string) error {
		return c.Create(ctx, &appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod + "-restart"},
			Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: pod, Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app"}}}})
	}
	if err := restart(pods[0]); err != nil {
		t.Fatalf("restart within the budget refused: %v", err)
	}
	got := &policyv1alpha1.PodUnavailableBudget{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pub), got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Status.UnavailablePods[pods[0]]; !ok {
		t.Errorf("the admitted restart is not recorded: %+v", got.Status)
	}
	t0 := time.Now()
	err := restart(pods[1])
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "PodUnavailableBudget restarts allows no more unavailable pods") {
		t.Fatalf("restart beyond the budget: %v; want 429 naming the budget", err)
	}
	t.Logf("refused: %v", err)
	harness.Eventually(t, 60*time.Second, "the second restart let through once the budget frees", func() (bool, string) {
		err := restart(pods[1])
		return err == nil, fmt.Sprint(err)
	})
	t.Logf("second restart admitted %.1fs after its refusal", time.Since(t0).Seconds())
}
