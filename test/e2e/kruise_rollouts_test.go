package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/test/harness"
)

// Kruise Rollouts (openkruise/rollouts, the release `make tools` builds) on Kruise, as OpenKruise's
// users run it: its manager and its fail-closed webhooks beside Kruise's, a canary Rollout with
// traffic (20% of the pods and of the traffic, paused, approved with `kubectl kruise rollout
// approve`, 100%) on a CloneSet, the same steps without traffic on an Advanced StatefulSet, and a
// BatchRelease moved batch by batch. Every step's pods are updated in place (the same pods, by UID),
// a paused step holds, the canary and stable Services select pods by pod-template-hash as Rollouts
// computes it from Kruise's revisions, and neither side's webhooks refuse the other's writes (the
// rollouts complete, and no Warning event is left in the namespace).
func TestKruiseRollouts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stop, err := sb.StartKruiseRollouts(ctx, filepath.Join(harness.BinDir(), "kruise-rollout"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(context.Background()); err != nil {
			t.Errorf("stop Kruise Rollouts: %v", err)
		}
	})
	plugin, err := harness.BuildCommand("kubectl-kruise")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("CloneSet canary with traffic", func(t *testing.T) {
		t.Parallel()
		rolloutsCloneSetCanary(t, plugin)
	})
	t.Run("Advanced StatefulSet canary", func(t *testing.T) {
		t.Parallel()
		rolloutsStatefulSetCanary(t, plugin)
	})
	t.Run("BatchRelease on a CloneSet", func(t *testing.T) {
		t.Parallel()
		rolloutsBatchRelease(t)
	})
}

// canarySteps are the steps both canaries take: 20% (of the traffic too, when routed) paused
// until approved, then every pod.
func canarySteps(traffic bool) []any {
	first := map[string]any{"replicas": "20%", "pause": map[string]any{}}
	if traffic {
		first["traffic"] = "20%"
	}
	return []any{first, map[string]any{"replicas": "100%"}}
}

func rolloutsCloneSetCanary(t *testing.T, plugin string) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	clone := newCloneSet(ns, "echo", 5, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	mustCreate(t, c, clone)
	mustCreate(t, c, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "echo"}, Ports: []corev1.ServicePort{{Port: 80}}}})
	mustCreate(t, c, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: ns},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("nginx"), Rules: []networkingv1.IngressRule{{Host: "echo.example",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: "echo", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}})
	waitCloneSet(t, c, ns, "echo", "5 pods ready", func(s *appsv1alpha1.CloneSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.ReadyReplicas == 5 && s.Status.UpdatedReadyReplicas == 5
	})
	rollout := rolloutsObject("Rollout", ns, "echo", map[string]any{
		"workloadRef": map[string]any{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "echo"},
		"strategy": map[string]any{"canary": map[string]any{"steps": canarySteps(true),
			"trafficRoutings": []any{map[string]any{"service": "echo", "ingress": map[string]any{"name": "echo"}}}}}})
	mustCreate(t, c, rollout)
	waitRolloutPhase(t, c, rollout, "Healthy")
	before := rolloutsPods(t, ns, "echo")

	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	waitRolloutStep(t, c, rollout, 1, "StepPaused")
	clone = waitCloneSet(t, c, ns, "echo", "1 pod updated", func(s *appsv1alpha1.CloneSet) bool {
		return s.Status.UpdatedReadyReplicas == 1
	})
	stable, canary := revisionHash(clone.Status.CurrentRevision), revisionHash(clone.Status.UpdateRevision)
	checkPodsAt(t, ns, "echo", before, "pod-template-hash", map[string]int{canary: 1, stable: 4})
	checkSelector(t, c, ns, "echo-canary", canary)
	checkSelector(t, c, ns, "echo", stable)
	ing := &networkingv1.Ingress{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "echo-canary"}, ing); err != nil {
		t.Fatalf("canary Ingress: %v", err)
	}
	if w := ing.Annotations["nginx.ingress.kubernetes.io/canary-weight"]; w != "20" {
		t.Errorf("canary Ingress weight %q, want 20", w)
	}
	checkStepHolds(t, c, rollout, 1, func() { checkPodsAt(t, ns, "echo", before, "pod-template-hash", map[string]int{canary: 1, stable: 4}) })

	approve(t, plugin, ns, "rollout/echo")
	waitRolloutPhase(t, c, rollout, "Healthy")
	checkPodsAt(t, ns, "echo", before, "pod-template-hash", map[string]int{canary: 5})
	checkSelector(t, c, ns, "echo", "")
	for _, gone := range []client.Object{&corev1.Service{}, &networkingv1.Ingress{}} {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "echo-canary"}, gone); !apierrors.IsNotFound(err) {
			t.Errorf("canary %T still there after the rollout (err %v)", gone, err)
		}
	}
	finishRollouts(t, c, ns, rollout)
}

func rolloutsStatefulSetCanary(t *testing.T, plugin string) {
	c := kruiseClient(t)
	ns := namespace(t)
	set := newStatefulSet(ns, "db", 5, "Parallel")
	set.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	mustCreate(t, c, set)
	waitStatefulSet(t, c, ns, "db", "5 pods ready", func(s *appsv1beta1.StatefulSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.ReadyReplicas == 5 && s.Status.UpdatedReplicas == 5
	})
	rollout := rolloutsObject("Rollout", ns, "db", map[string]any{
		"workloadRef": map[string]any{"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "db"},
		"strategy":    map[string]any{"canary": map[string]any{"steps": canarySteps(false)}}})
	mustCreate(t, c, rollout)
	waitRolloutPhase(t, c, rollout, "Healthy")
	before := rolloutsPods(t, ns, "db")

	patchStatefulSet(t, c, set, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	waitRolloutStep(t, c, rollout, 1, "StepPaused")
	set = waitStatefulSet(t, c, ns, "db", "1 pod updated", func(s *appsv1beta1.StatefulSet) bool {
		return s.Status.UpdatedReadyReplicas == 1
	})
	stable, canary := set.Status.CurrentRevision, set.Status.UpdateRevision
	checkPodsAt(t, ns, "db", before, "controller-revision-hash", map[string]int{canary: 1, stable: 4})
	checkStepHolds(t, c, rollout, 1, func() {
		checkPodsAt(t, ns, "db", before, "controller-revision-hash", map[string]int{canary: 1, stable: 4})
	})

	approve(t, plugin, ns, "rollout/db")
	waitRolloutPhase(t, c, rollout, "Healthy")
	checkPodsAt(t, ns, "db", before, "controller-revision-hash", map[string]int{canary: 5})
	finishRollouts(t, c, ns, rollout)
}

func rolloutsBatchRelease(t *testing.T) {
	c := kruiseClient(t)
	ns := namespace(t)
	clone := newCloneSet(ns, "batch", 5, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromString("100%"))
	mustCreate(t, c, clone)
	waitCloneSet(t, c, ns, "batch", "5 pods ready", func(s *appsv1alpha1.CloneSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.ReadyReplicas == 5
	})
	before := rolloutsPods(t, ns, "batch")
	// Held by its partition, the new revision waits for the BatchRelease.
	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	clone = waitCloneSet(t, c, ns, "batch", "v2 recorded", func(s *appsv1alpha1.CloneSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdateRevision != s.Status.CurrentRevision
	})
	stable, canary := revisionHash(clone.Status.CurrentRevision), revisionHash(clone.Status.UpdateRevision)
	release := rolloutsObject("BatchRelease", ns, "batch", map[string]any{
		"workloadRef": map[string]any{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "batch"},
		"releasePlan": map[string]any{"batchPartition": int64(0), "rollingStyle": "Partition", "enableExtraWorkloadForCanary": false,
			"batches": []any{map[string]any{"canaryReplicas": "20%"}, map[string]any{"canaryReplicas": "60%"},
				map[string]any{"canaryReplicas": "100%"}}}})
	mustCreate(t, c, release)
	for batch, updated := range []int{1, 3, 5} {
		if batch > 0 {
			patch := fmt.Sprintf(`{"spec":{"releasePlan":{"batchPartition":%d}}}`, batch)
			if err := c.Patch(context.Background(), release, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
				t.Fatal(err)
			}
		}
		waitObject(t, c, release, fmt.Sprintf("BatchRelease's batch %d ready", batch), 90*time.Second, func(u *unstructured.Unstructured) bool {
			cur, _, _ := unstructured.NestedInt64(u.Object, "status", "canaryStatus", "currentBatch")
			state, _, _ := unstructured.NestedString(u.Object, "status", "canaryStatus", "batchState")
			return cur == int64(batch) && state == "Ready"
		}, rolloutsStatus)
		checkPodsAt(t, ns, "batch", before, "pod-template-hash", map[string]int{canary: updated, stable: 5 - updated})
	}
	finishRollouts(t, c, ns, release)
}

// rolloutsObject is an object of Kruise Rollouts' API (rollouts.kruise.io/v1beta1).
func rolloutsObject(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("rollouts.kruise.io/v1beta1")
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

func rolloutsStatus(u *unstructured.Unstructured) string {
	st, _, _ := unstructured.NestedMap(u.Object, "status")
	return fmt.Sprintf("%v", st)
}

func waitRolloutPhase(t *testing.T, c client.Client, r *unstructured.Unstructured, phase string) {
	t.Helper()
	waitObject(t, c, r, "Rollout "+phase, 90*time.Second, func(u *unstructured.Unstructured) bool {
		got, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		gen, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return got == phase && gen == u.GetGeneration()
	}, rolloutsStatus)
}

func waitRolloutStep(t *testing.T, c client.Client, r *unstructured.Unstructured, step int64, state string) {
	t.Helper()
	waitObject(t, c, r, fmt.Sprintf("Rollout at step %d %s", step, state), 90*time.Second, func(u *unstructured.Unstructured) bool {
		return rolloutStep(u) == fmt.Sprintf("%d %s", step, state)
	}, rolloutsStatus)
}

func rolloutStep(u *unstructured.Unstructured) string {
	idx, _, _ := unstructured.NestedInt64(u.Object, "status", "currentStepIndex")
	state, _, _ := unstructured.NestedString(u.Object, "status", "currentStepState")
	return fmt.Sprintf("%d %s", idx, state)
}

// checkStepHolds watches a paused step for 3 s: it stays paused and check keeps holding.
func checkStepHolds(t *testing.T, c client.Client, r *unstructured.Unstructured, step int64, check func()) {
	t.Helper()
	want := fmt.Sprintf("%d StepPaused", step)
	harness.Consistently(t, 3*time.Second, "the paused step holds", func() (bool, string) {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(r), r); err != nil {
			return false, err.Error()
		}
		check()
		got := rolloutStep(r)
		return got == want, fmt.Sprintf("at %q, want %q", got, want)
	})
}

// approve moves a paused Rollout on with kubectl-kruise, as kruise-tools does.
func approve(t *testing.T, plugin, ns, ref string) {
	t.Helper()
	out, code := kubectlKruise(t, plugin, ns, "rollout", "approve", ref)
	if code != 0 {
		t.Fatalf("kubectl kruise rollout approve %s: exit %d: %s", ref, code, out)
	}
}

// rolloutsPods are the pods labelled app=name, by UID.
func rolloutsPods(t *testing.T, ns, app string) map[types.UID]*corev1.Pod {
	t.Helper()
	list, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	pods := map[types.UID]*corev1.Pod{}
	for i := range list.Items {
		pods[list.Items[i].UID] = &list.Items[i]
	}
	return pods
}

// checkPodsAt checks that app's pods are the pods of before (none recreated: updated in place) and
// that as many carry each value of label as want says, the updated ones Ready.
func checkPodsAt(t *testing.T, ns, app string, before map[types.UID]*corev1.Pod, label string, want map[string]int) {
	t.Helper()
	now := rolloutsPods(t, ns, app)
	var gone, added []string
	for uid, p := range before {
		if now[uid] == nil {
			gone = append(gone, p.Name)
		}
	}
	got := map[string]int{}
	for uid, p := range now {
		if before[uid] == nil {
			added = append(added, p.Name)
		}
		got[p.Labels[label]]++
	}
	if len(gone)+len(added) > 0 {
		t.Fatalf("pods recreated, not updated in place: gone %v, new %v", gone, added)
	}
	for v, n := range want {
		if got[v] != n {
			t.Fatalf("%d pods with %s=%s, want %d (all: %v)", got[v], label, v, n, got)
		}
	}
}

// checkSelector checks that Service name selects pod-template-hash=hash (none when hash is empty).
func checkSelector(t *testing.T, c client.Client, ns, name, hash string) {
	t.Helper()
	svc := &corev1.Service{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
		t.Fatalf("Service %s: %v", name, err)
	}
	if got := svc.Spec.Selector["pod-template-hash"]; got != hash {
		t.Errorf("Service %s selects pod-template-hash %q, want %q (selector %v)", name, got, hash, svc.Spec.Selector)
	}
}

// revisionHash is a workload revision's hash, as Rollouts reads it (the part after the last '-').
func revisionHash(revision string) string { return revision[strings.LastIndex(revision, "-")+1:] }

// finishRollouts deletes Kruise Rollouts' object (its finalizer needs its manager), waits for it to
// go, and checks that nothing in the namespace warned: no write of either side was refused.
func finishRollouts(t *testing.T, c client.Client, ns string, obj *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	if err := c.Delete(ctx, obj); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, obj.GetKind()+" gone", func() (bool, string) {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopy())
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "type=Warning"})
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	for _, e := range events.Items {
		warned = append(warned, fmt.Sprintf("%s %s/%s: %s", e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message))
	}
	slices.Sort(warned)
	if len(warned) > 0 {
		t.Errorf("Warning events:\n%s", strings.Join(warned, "\n"))
	}
}
