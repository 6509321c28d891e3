package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
	"github.com/kruise-ng/kruise/pkg/webhook/spreadplacement"
	"github.com/kruise-ng/kruise/test/harness"
)

// spreadCloneSet is a CloneSet of app=NAME on the namespace's private nodes, scaled to 0 (the
// spread's webhook entry needs the CloneSet's selector before its pods are created).
func spreadCloneSet(ns, name string) *appsv1alpha1.CloneSet {
	pod := privatePodSpec(ns, "registry.example/app:v1")
	return harness.NewCloneSet(ns, name, 0, appsv1alpha1.RecreateCloneSetUpdateStrategyType, pod)
}

func zoneTerm(zone string) *corev1.NodeSelectorTerm {
	return &corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}}}
}

// newSpread spreads CloneSet name over zone a (maxA pods at most) and zone b (the rest).
func newSpread(ns, name string, maxA int32) *appsv1alpha1.WorkloadSpread {
	return &appsv1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1alpha1.WorkloadSpreadSpec{
			TargetReference: &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: name},
			Subsets: []appsv1alpha1.WorkloadSpreadSubset{
				{Name: "a", RequiredNodeSelectorTerm: zoneTerm("a"), MaxReplicas: ptr.To(intstr.FromInt32(maxA))},
				{Name: "b", RequiredNodeSelectorTerm: zoneTerm("b")}}}}
}

// waitSpreadRegistered waits until the API server calls Kruise for the spread's pods.
func waitSpreadRegistered(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	harness.Eventually(t, 60*time.Second, "the WorkloadSpread's webhook entry", func() (bool, string) {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: install.WorkloadSpreadConfiguration}, cfg); err != nil {
			return false, err.Error()
		}
		var names []string
		for _, w := range cfg.Webhooks {
			if w.Name == spreadplacement.EntryName(ns, name) {
				return true, ""
			}
			names = append(names, w.Name)
		}
		return false, strings.Join(names, " ")
	})
}

// subsetOf is the subset the pod's annotation names ("" when none).
func subsetOf(p *corev1.Pod) string {
	if m := spreadrules.MatchedOf(p); m != nil {
		return m.Subset
	}
	return ""
}

// requiresZone tells whether the pod's required node affinity asks for zone in every term.
func requiresZone(p *corev1.Pod, zone string) bool {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for _, term := range terms {
		found := false
		for _, e := range term.MatchExpressions {
			found = found || (e.Key == "zone" && len(e.Values) == 1 && e.Values[0] == zone)
		}
		if !found {
			return false
		}
	}
	return len(terms) > 0
}

// bySubset counts the live pods per subset, checking that each carries its subset's affinity and
// runs (when scheduled) in its zone.
func bySubset(t *testing.T, ns, app string, zones map[string]string) (map[string]int, []string) {
	t.Helper()
	count := map[string]int{}
	var wrong []string
	for name, p := range podsByName(t, ns, "app="+app) {
		s := subsetOf(p)
		count[s]++
		if s == "" || !requiresZone(p, s) || (p.Spec.NodeName != "" && p.Spec.NodeName != zones[s]) {
			wrong = append(wrong, fmt.Sprintf("%s (subset %q, node %s)", name, s, p.Spec.NodeName))
		}
	}
	sort.Strings(wrong)
	return count, wrong
}

func waitSpreadStatus(t *testing.T, c client.Client, ns, name, what string, cond func(*appsv1alpha1.WorkloadSpread) bool) {
	t.Helper()
	harness.Eventually(t, 60*time.Second, "WorkloadSpread "+what, func() (bool, string) {
		ws := &appsv1alpha1.WorkloadSpread{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, ws); err != nil {
			return false, err.Error()
		}
		return ws.Status.ObservedGeneration == ws.Generation && cond(ws), fmt.Sprintf("%+v", ws.Status)
	})
}

func subsetStatus(ws *appsv1alpha1.WorkloadSpread, name string) appsv1alpha1.WorkloadSpreadSubsetStatus {
	for _, s := range ws.Status.SubsetStatuses {
		if s.Name == name {
			return s
		}
	}
	return appsv1alpha1.WorkloadSpreadSubsetStatus{Name: name, Replicas: -1}
}

// A WorkloadSpread over a CloneSet places its first 2 pods in zone a and the rest in zone b: each
// pod carries its subset's affinity and annotation, the status counts them, the deletion costs
// rank zone b's pods first, and a scale-in removes zone b's pods first.
func TestWorkloadSpreadPlacesCloneSetPods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := zonedNodes(t, ns, "a", "b")
	const replicas = 5
	clone := spreadCloneSet(ns, "spread")
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, newSpread(ns, "spread", 2)); err != nil {
		t.Fatal(err)
	}
	waitSpreadRegistered(t, c, ns, "spread")
	patchCloneSet(t, c, clone, fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	waitCloneSet(t, c, ns, "spread", "all ready", harness.RolledOut(replicas))
	count, wrong := bySubset(t, ns, "spread", zones)
	if len(wrong) > 0 || count["a"] != 2 || count["b"] != replicas-2 {
		t.Fatalf("per subset %v; pods out of their subset: %v", count, wrong)
	}
	waitSpreadStatus(t, c, ns, "spread", "counts the subsets", func(ws *appsv1alpha1.WorkloadSpread) bool {
		a, b := subsetStatus(ws, "a"), subsetStatus(ws, "b")
		return a.Replicas == 2 && a.MissingReplicas == 0 && b.Replicas == replicas-2 && b.MissingReplicas == -1
	})
	harness.Eventually(t, 30*time.Second, "deletion costs: zone a 200, zone b 100", func() (bool, string) {
		var seen []string
		ok := true
		for name, p := range podsByName(t, ns, "app=spread") {
			cost := p.Annotations[spreadrules.DeletionCostAnnotation]
			want := map[string]string{"a": "200", "b": "100"}[subsetOf(p)]
			ok = ok && cost == want
			seen = append(seen, name+"="+cost)
		}
		sort.Strings(seen)
		return ok, strings.Join(seen, " ")
	})

	patchCloneSet(t, c, clone, `{"spec":{"replicas":2}}`)
	harness.Eventually(t, 60*time.Second, "only zone a's pods left", func() (bool, string) {
		count, wrong := bySubset(t, ns, "spread", zones)
		return count["a"] == 2 && len(count) == 1 && len(wrong) == 0, fmt.Sprintf("%v %v", count, wrong)
	})
	waitSpreadStatus(t, c, ns, "spread", "counts the scale-in", func(ws *appsv1alpha1.WorkloadSpread) bool {
		return subsetStatus(ws, "a").Replicas == 2 && subsetStatus(ws, "b").Replicas == 0
	})
}

// B1: during a rollout with maxSurge, the surge pods count against their subset: zone a never
// holds more live pods than its maxReplicas, sampled all along the rollout.
func TestWorkloadSpreadHoldsDuringSurgeRollout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := zonedNodes(t, ns, "a", "b")
	const replicas, maxA = 6, 2
	clone := spreadCloneSet(ns, "surge")
	clone.Spec.UpdateStrategy.MaxSurge = ptr.To(intstr.FromInt32(2))
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, newSpread(ns, "surge", maxA)); err != nil {
		t.Fatal(err)
	}
	waitSpreadRegistered(t, c, ns, "surge")
	patchCloneSet(t, c, clone, fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	waitCloneSet(t, c, ns, "surge", "all ready", harness.RolledOut(replicas))

	peak, samples, stop := sampleSubset(t, ns, "surge", "a")
	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	waitCloneSet(t, c, ns, "surge", "rolled out", harness.RolledOut(replicas))
	stop()
	if peak() > maxA {
		t.Errorf("zone a held up to %d live pods during the rollout; its maxReplicas is %d", peak(), maxA)
	}
	t.Logf("%d samples during the rollout, zone a peaked at %d pods", samples(), peak())
	count, wrong := bySubset(t, ns, "surge", zones)
	if len(wrong) > 0 || count["a"] > maxA || count["a"]+count["b"] != replicas {
		t.Errorf("after the rollout: per subset %v; out of their subset: %v", count, wrong)
	}
}

// sampleSubset polls the app's live pods placed in subset until stop, returning the peak count.
func sampleSubset(t *testing.T, ns, app, subset string) (peak, samples func() int, stop func()) {
	t.Helper()
	var mu sync.Mutex
	var max, n int
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			list, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
			if err != nil {
				continue
			}
			live := 0
			for i := range list.Items {
				p := &list.Items[i]
				if p.DeletionTimestamp == nil && subsetOf(p) == subset {
					live++
				}
			}
			mu.Lock()
			n++
			if live > max {
				max = live
			}
			mu.Unlock()
		}
	}()
	read := func(v *int) func() int {
		return func() int { mu.Lock(); defer mu.Unlock(); return *v }
	}
	return read(&max), read(&n), func() { close(done); <-finished }
}

// B2: pods deleted and recreated at a high rate are each placed in their subset: every pod created
// carries its subset's affinity, and the spread's quota holds once the churn stops.
func TestWorkloadSpreadUnderChurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := zonedNodes(t, ns, "a", "b")
	const replicas, maxA, rounds = 8, 3, 6
	clone := spreadCloneSet(ns, "churn")
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, newSpread(ns, "churn", maxA)); err != nil {
		t.Fatal(err)
	}
	waitSpreadRegistered(t, c, ns, "churn")
	patchCloneSet(t, c, clone, fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	waitCloneSet(t, c, ns, "churn", "all ready", harness.RolledOut(replicas))

	// Every pod created from here on is seen by the watch, however briefly it lives.
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "app=churn"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[types.UID]bool{}
	var unplaced []string
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type != watch.Added || seen[p.UID] {
				continue
			}
			seen[p.UID] = true
			if s := subsetOf(p); s == "" || !requiresZone(p, s) {
				unplaced = append(unplaced, p.Name)
			}
		}
	}()
	for round := range rounds {
		// Delete half the pods at once, both subsets' alike.
		i := 0
		for _, p := range podsByName(t, ns, "app=churn") {
			if i%2 == round%2 {
				if err := c.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
					t.Fatal(err)
				}
			}
			i++
		}
		time.Sleep(300 * time.Millisecond) // the churn's pace, not a synchronisation
	}
	waitCloneSet(t, c, ns, "churn", "all ready again", harness.RolledOut(replicas))
	w.Stop()
	<-collected
	if len(unplaced) > 0 {
		t.Errorf("%d of %d pods created without their subset: %v", len(unplaced), len(seen), unplaced)
	}
	harness.Eventually(t, 60*time.Second, "the quota holds after the churn", func() (bool, string) {
		count, wrong := bySubset(t, ns, "churn", zones)
		return count["a"] <= maxA && count["a"]+count["b"] == replicas && len(wrong) == 0, fmt.Sprintf("%v %v", count, wrong)
	})
	t.Logf("%d pods created over %d rounds of deletions", len(seen), rounds)
}

// A Deployment's pods are placed too (their ReplicaSet is the pod's owner), counted per revision
// (pod-template-hash) as OpenKruise keeps them; after a rollout the new revision is spread as the
// first was.
func TestWorkloadSpreadPlacesDeploymentPods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := zonedNodes(t, ns, "a", "b")
	const replicas = 4
	tmpl := spreadCloneSet(ns, "dep").Spec.Template
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dep"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "dep"}}, Template: tmpl}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spread := newSpread(ns, "dep", 2)
	spread.Spec.TargetReference = &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "dep"}
	if err := c.Create(ctx, spread); err != nil {
		t.Fatal(err)
	}
	waitSpreadRegistered(t, c, ns, "dep")
	scaleDeployment := func(patch string) {
		t.Helper()
		if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "dep", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	settled := func(what, not string) string {
		t.Helper()
		var hash string
		harness.Eventually(t, 90*time.Second, what, func() (bool, string) {
			count, wrong := bySubset(t, ns, "dep", zones)
			pods := podsByName(t, ns, "app=dep")
			hashes := map[string]bool{}
			for _, p := range pods {
				hashes[p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]] = true
				hash = p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
			}
			return count["a"] == 2 && count["b"] == replicas-2 && len(wrong) == 0 && len(hashes) == 1 && len(pods) == replicas && hash != not,
				fmt.Sprintf("%v %v, revisions %v", count, wrong, hashes)
		})
		return hash
	}
	scaleDeployment(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	first := settled("4 pods spread 2 + 2", "")
	waitSpreadStatus(t, c, ns, "dep", "counts the revision", func(ws *appsv1alpha1.WorkloadSpread) bool {
		v := ws.Status.VersionedSubsetStatuses[first]
		return len(v) == 2 && v[0].Replicas == 2 && v[1].Replicas == replicas-2 && subsetStatus(ws, "a").Replicas == 2
	})
	scaleDeployment(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	second := settled("the new revision spread 2 + 2", first)
	waitSpreadStatus(t, c, ns, "dep", "drops the old revision", func(ws *appsv1alpha1.WorkloadSpread) bool {
		_, old := ws.Status.VersionedSubsetStatuses[first]
		return !old && len(ws.Status.VersionedSubsetStatuses[second]) == 2 && subsetStatus(ws, "a").Replicas == 2
	})
}

// While Kruise is down, a pod no WorkloadSpread selects is created as usual and a spread's pod is
// deleted as usual; the spread's new pods wait (refused, never created outside their subset) and
// are placed once Kruise is back.
func TestWorkloadSpreadManagerOutage(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := zonedNodes(t, ns, "a", "b")
	spread := spreadCloneSet(ns, "down")
	other := spreadCloneSet(ns, "other")
	for _, o := range []client.Object{spread, other, newSpread(ns, "down", 1)} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	waitSpreadRegistered(t, c, ns, "down")
	patchCloneSet(t, c, spread, `{"spec":{"replicas":2}}`)
	waitCloneSet(t, c, ns, "down", "2 ready", harness.RolledOut(2))
	err := sb.WithoutKruiseManager(ctx, func() error {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Labels: map[string]string{"app": "unrelated"}},
			Spec: other.Spec.Template.Spec}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("a pod no spread selects: %w", err)
		}
		for name := range podsByName(t, ns, "app=down") {
			if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				return fmt.Errorf("deleting the spread's pod %s: %w", name, err)
			}
			break
		}
		selected := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "selected", Labels: map[string]string{"app": "down"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "down", UID: spread.UID, Controller: ptr.To(true)}}},
			Spec: other.Spec.Template.Spec}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, selected, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), spreadplacement.EntryName(ns, "down")) {
			return fmt.Errorf("a pod the spread selects, created while Kruise is down: %v (want refused by %s)", err, spreadplacement.EntryName(ns, "down"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, "the spread's pods placed once Kruise is back", func() (bool, string) {
		count, wrong := bySubset(t, ns, "down", zones)
		// The deletion during the outage was not recorded (deletions fail open), so the replacement
		// may be placed before the controller recounts zone a: any placement within the quota is right.
		return len(wrong) == 0 && count["a"] <= 1 && count["a"]+count["b"] == 2, fmt.Sprintf("per subset %v; out of their subset %v", count, wrong)
	})
}

// Adaptive: the pods of a subset without room on its nodes are stuck Pending; after
// rescheduleCriticalSeconds the subset is marked unschedulable (condition Schedulable False) and
// the pods are deleted, so the CloneSet recreates them and they are placed in the next subset.
func TestWorkloadSpreadAdaptiveReschedules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := zonedNodes(t, ns, "a", "b")
	clone := spreadCloneSet(ns, "adaptive")
	spread := newSpread(ns, "adaptive", 2)
	spread.Spec.Subsets[0].RequiredNodeSelectorTerm = zoneTerm("nowhere") // no node: its pods never schedule
	spread.Spec.ScheduleStrategy = appsv1alpha1.WorkloadSpreadScheduleStrategy{Type: appsv1alpha1.WorkloadSpreadAdaptiveScheduleStrategy,
		Adaptive: &appsv1alpha1.WorkloadSpreadAdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](2)}}
	for _, o := range []client.Object{clone, spread} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	waitSpreadRegistered(t, c, ns, "adaptive")
	patchCloneSet(t, c, clone, `{"spec":{"replicas":3}}`)
	harness.Eventually(t, 90*time.Second, "every pod rescheduled into zone b", func() (bool, string) {
		var seen []string
		ok := true
		pods := podsByName(t, ns, "app=adaptive")
		for name, p := range pods {
			ok = ok && subsetOf(p) == "b" && p.Spec.NodeName == zones["b"]
			seen = append(seen, fmt.Sprintf("%s:%s@%s", name, subsetOf(p), p.Spec.NodeName))
		}
		sort.Strings(seen)
		return ok && len(pods) == 3, strings.Join(seen, " ")
	})
	waitSpreadStatus(t, c, ns, "adaptive", "marks subset a unschedulable", func(ws *appsv1alpha1.WorkloadSpread) bool {
		a := subsetStatus(ws, "a")
		cond := spreadrules.Condition(&a, appsv1alpha1.WorkloadSpreadSubsetSchedulable)
		return cond != nil && cond.Status == corev1.ConditionFalse && subsetStatus(ws, "b").Replicas == 3
	})
}

// A WorkloadSpread over a Job: its pods (parallelism 3, the Job's replicas as OpenKruise reads
// them) are placed, 1 in zone a and 2 in zone b, each with its subset's affinity.
func TestWorkloadSpreadPlacesJobPods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := zonedNodes(t, ns, "a", "b")
	pod := privatePodSpec(ns, "registry.example/app:v1")
	pod.RestartPolicy = corev1.RestartPolicyNever
	// Suspended until the spread's entry is registered: the entry needs the Job's selector.
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "work"},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3), Completions: ptr.To[int32](3), Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "work"}}, Spec: pod}}}
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ws := newSpread(ns, "work", 1)
	ws.Spec.TargetReference = &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: "batch/v1", Kind: "Job", Name: "work"}
	if err := c.Create(ctx, ws); err != nil {
		t.Fatal(err)
	}
	waitSpreadRegistered(t, c, ns, "work")
	if _, err := cs.BatchV1().Jobs(ns).Patch(ctx, "work", types.MergePatchType, []byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, time.Minute, "the Job's 3 pods placed: 1 in zone a, 2 in zone b", func() (bool, string) {
		count, wrong := bySubset(t, ns, "work", zones)
		return len(wrong) == 0 && count["a"] == 1 && count["b"] == 2, fmt.Sprintf("per subset %v, misplaced %v", count, wrong)
	})
}

// A percentage quota follows the workload's replicas: zone a never holds more than 50% of them, its
// status counts its room against the current replicas, and the room a scale-up opens there is
// taken by the next pod created (a deleted zone-b pod's replacement). Pods created in the moment
// before the spread's status shows new replicas go by the quota it showed, as in OpenKruise.
func TestWorkloadSpreadPercentQuota(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := zonedNodes(t, ns, "a", "b")
	clone := spreadCloneSet(ns, "pct")
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	ws := newSpread(ns, "pct", 0)
	ws.Spec.Subsets[0].MaxReplicas = ptr.To(intstr.FromString("50%"))
	if err := c.Create(ctx, ws); err != nil {
		t.Fatal(err)
	}
	waitSpreadRegistered(t, c, ns, "pct")
	settled := func(n int) {
		t.Helper()
		harness.Eventually(t, time.Minute, fmt.Sprintf("%d pods, at most half in zone a, its room counted against %d", n, n), func() (bool, string) {
			count, wrong := bySubset(t, ns, "pct", zones)
			cur := &appsv1alpha1.WorkloadSpread{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(ws), cur); err != nil {
				return false, err.Error()
			}
			a := subsetStatus(cur, "a")
			ok := len(wrong) == 0 && count["a"]+count["b"] == n && count["a"] <= n/2 &&
				a.Replicas == int32(count["a"]) && a.MissingReplicas == int32(n/2-count["a"])
			return ok, fmt.Sprintf("per subset %v, misplaced %v, zone a status %+v", count, wrong, a)
		})
	}
	for _, n := range []int{4, 6} {
		patchCloneSet(t, c, clone, fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
		settled(n)
	}
	for range 3 {
		count, _ := bySubset(t, ns, "pct", zones)
		if count["a"] == 3 {
			return
		}
		for _, p := range podsByName(t, ns, "app=pct") {
			if subsetOf(p) == "b" {
				if err := cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
		settled(6)
	}
	if count, _ := bySubset(t, ns, "pct", zones); count["a"] != 3 {
		t.Errorf("per subset %v: the replacement of a zone-b pod did not take zone a's room", count)
	}
}

// An Advanced StatefulSet spread after its first pods exist: the existing pods are placed after the
// fact by the node they run on and get their subset's patched label; new ordinals go by ordinal
// range (0-1 zone a, the rest zone b) with their subset's affinity and patch.
func TestWorkloadSpreadStatefulSetPatchAndExistingPods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := zonedNodes(t, ns, "a", "b")
	pod := privatePodSpec(ns, "registry.example/app:v1")
	labels := map[string]string{"app": "db"}
	set := &appsv1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: appsv1beta1.StatefulSetSpec{Replicas: ptr.To[int32](2), PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod}}}
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	harness.WaitStatefulSet(t, c, time.Minute, ns, "db", "2 pods ready", harness.StatefulSetRolledOut(2))
	ws := newSpread(ns, "db", 2)
	ws.Spec.TargetReference = &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Name: "db"}
	for i, tier := range []string{"a", "b"} {
		ws.Spec.Subsets[i].Patch = runtime.RawExtension{Raw: fmt.Appendf(nil, `{"metadata":{"labels":{"tier":%q}}}`, tier)}
	}
	if err := c.Create(ctx, ws); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, time.Minute, "the 2 existing pods placed by their node, with their subset's label", func() (bool, string) {
		var seen []string
		ok := true
		for name, p := range podsByName(t, ns, "app=db") {
			s := subsetOf(p)
			ok = ok && s != "" && p.Spec.NodeName == zones[s] && p.Labels["tier"] == s
			seen = append(seen, fmt.Sprintf("%s(node %s, subset %q, tier %q)", name, p.Spec.NodeName, s, p.Labels["tier"]))
		}
		sort.Strings(seen)
		return ok && len(seen) == 2, strings.Join(seen, " ")
	})
	waitSpreadRegistered(t, c, ns, "db")
	if err := c.Patch(ctx, set, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":4}}`))); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, time.Minute, "db-2 and db-3 in zone b by their ordinals, patched", func() (bool, string) {
		var seen []string
		ok := true
		for _, name := range []string{"db-2", "db-3"} {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			ok = ok && subsetOf(p) == "b" && requiresZone(p, "b") && p.Labels["tier"] == "b"
			seen = append(seen, fmt.Sprintf("%s(subset %q, tier %q)", name, subsetOf(p), p.Labels["tier"]))
		}
		return ok, strings.Join(seen, " ")
	})
}
