package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

func kruiseClient(t *testing.T) client.Client {
	t.Helper()
	cfg, err := sb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return harness.KruiseClient(t, cfg)
}

// A CloneSet rolls a new image out in place: every pod keeps its UID and restarts its container
// once, never more than maxUnavailable pods are NotReady at a time, and the status reports the
// rollout done. Scaling in then removes pods down to the new replica count.
func TestCloneSetRollsOutInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas, maxUnavailable = 100, 20
	clone := newCloneSet(ns, "inplace", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(maxUnavailable))
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "inplace", "all replicas ready", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ReadyReplicas == replicas && cs.Status.UpdatedReadyReplicas == replicas
	})
	before := podsByName(t, ns, "app=inplace")

	notReady, stop := watchNotReady(t, ns, "app=inplace")
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	done := waitCloneSet(t, c, ns, "inplace", "rolled out in place", harness.RolledOut(replicas))
	t.Logf("%d pods updated in place in %.1fs", replicas, time.Since(t0).Seconds())
	stop()
	if peak := notReady(); peak > maxUnavailable {
		t.Errorf("up to %d pods were NotReady at once; maxUnavailable is %d", peak, maxUnavailable)
	}
	after := podsByName(t, ns, "app=inplace")
	harness.CheckUpdatedInPlace(t, before, after, replicas)
	for name, p := range after {
		if p.Spec.Containers[0].Image != "registry.example/app:v2" {
			t.Errorf("pod %s runs %s, want registry.example/app:v2", name, p.Spec.Containers[0].Image)
		}
		if !hasGate(p, appspub.KruisePodReadyConditionType) || !hasGate(p, appspub.InPlaceUpdateReady) {
			t.Errorf("pod %s lacks Kruise's readiness gates: %v", name, p.Spec.ReadinessGates)
		}
		if p.Labels["controller-revision-hash"] != done.Status.UpdateRevision {
			t.Errorf("pod %s revision %q; want %q", name, p.Labels["controller-revision-hash"], done.Status.UpdateRevision)
		}
	}

	scale := []byte(`{"spec":{"replicas":80}}`)
	if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, scale)); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "inplace", "scaled in to 80", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.Replicas == 80 && cs.Status.ReadyReplicas == 80
	})
	harness.Eventually(t, 60*time.Second, "80 pods left", func() (bool, string) {
		n := len(podsByName(t, ns, "app=inplace"))
		return n == 80, fmt.Sprintf("%d pods", n)
	})
}

func waitCloneSet(t *testing.T, c client.Client, ns, name, what string, cond func(*appsv1alpha1.CloneSet) bool) *appsv1alpha1.CloneSet {
	t.Helper()
	return harness.WaitCloneSet(t, c, 90*time.Second, ns, name, what, cond)
}

func podsByName(t *testing.T, ns, selector string) map[string]*corev1.Pod {
	t.Helper()
	return podsIn(t, cs, ns, selector)
}

// podsIn are the pods of clientset c's cluster matching selector, by name, terminating ones left out.
func podsIn(t *testing.T, c kubernetes.Interface, ns, selector string) map[string]*corev1.Pod {
	t.Helper()
	list, err := c.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out
}

// watchNotReady follows the pods' Ready conditions from now on and returns the largest number of
// pods seen NotReady at the same time.
func watchNotReady(t *testing.T, ns, selector string) (peakNotReady func() int, stop func()) {
	t.Helper()
	w, err := cs.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ready := map[string]bool{}
	peak := 0
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			ready[p.Name] = condition(p, corev1.PodReady) == corev1.ConditionTrue && p.DeletionTimestamp == nil
			n := 0
			for _, r := range ready {
				if !r {
					n++
				}
			}
			peak = max(peak, n)
			mu.Unlock()
		}
	}()
	return func() int { mu.Lock(); defer mu.Unlock(); return peak }, w.Stop
}

// A manager killed at a random point mid-rollout (SIGKILL) is replaced by a new one that finishes the rollout from
// what the pods record: no pod recreated, none lost, every container restarted exactly once.
func TestCloneSetRolloutSurvivesManagerCrash(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas = 30
	clone := newCloneSet(ns, "crash", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(3))
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "crash", "all ready", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.ReadyReplicas == replicas })
	before := podsByName(t, ns, "app=crash")

	// A random point of the rollout: after 1 to 24 of the 30 pods were updated (the seed is logged).
	seed := time.Now().UnixNano()
	point := 1 + rand.New(rand.NewPCG(uint64(seed), 0)).IntN(replicas-6)
	t.Logf("seed %d: the manager is killed once %d pods are updated", seed, point)
	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	underWay := waitCloneSet(t, c, ns, "crash", "rollout under way", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ObservedGeneration == cs.Generation && cs.Status.UpdatedReplicas >= int32(point)
	})
	if err := sb.CrashKruiseManager(ctx); err != nil {
		t.Fatal(err)
	}
	if underWay.Status.UpdatedReadyReplicas >= replicas {
		t.Fatalf("the rollout had finished before the crash; the test proves nothing: %+v", underWay.Status)
	}
	t.Logf("manager killed with %d of %d pods updated", underWay.Status.UpdatedReplicas, replicas)
	waitCloneSet(t, c, ns, "crash", "rollout finished by the new manager", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.UpdatedReadyReplicas == replicas && cs.Status.ReadyReplicas == replicas
	})
	after := podsByName(t, ns, "app=crash")
	if len(after) != replicas {
		t.Fatalf("%d pods after the rollout; want %d", len(after), replicas)
	}
	for name, p := range after {
		if b, ok := before[name]; !ok || b.UID != p.UID {
			t.Errorf("pod %s was recreated across the manager crash", name)
		}
		if st := p.Status.ContainerStatuses[0]; st.RestartCount != 1 || p.Spec.Containers[0].Image != "registry.example/app:v2" {
			t.Errorf("pod %s: %s", name, describe(p))
		}
	}
}

func hasGate(p *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, g := range p.Spec.ReadinessGates {
		if g.ConditionType == typ {
			return true
		}
	}
	return false
}
