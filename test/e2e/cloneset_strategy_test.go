package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

func newCloneSet(ns, name string, replicas int32, typ appsv1alpha1.CloneSetUpdateStrategyType) *appsv1alpha1.CloneSet {
	return harness.NewCloneSet(ns, name, replicas, typ, podSpec("registry.example/app:v1"))
}

func patchCloneSet(t *testing.T, c client.Client, cs *appsv1alpha1.CloneSet, patch string) {
	t.Helper()
	if err := c.Patch(context.Background(), cs, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// countImages counts the live pods per image of their first container.
func countImages(t *testing.T, ns, app string) map[string]int {
	out := map[string]int{}
	for _, p := range podsByName(t, ns, "app="+app) {
		out[p.Spec.Containers[0].Image]++
	}
	return out
}

// partition keeps that many pods at the old revision; lowering it to 0 finishes the rollout. Paused
// updates nothing until resumed.
func TestCloneSetPartitionAndPause(t *testing.T) {
	t.Parallel()
	c := kruiseClient(t)
	ns := namespace(t)
	clone := newCloneSet(ns, "part", 6, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	if err := c.Create(context.Background(), clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "part", "6 ready", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.ReadyReplicas == 6 })

	patchCloneSet(t, c, clone, `{"spec":{"updateStrategy":{"partition":4},"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	waitCloneSet(t, c, ns, "part", "2 updated above the partition", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ObservedGeneration == cs.Generation && cs.Status.UpdatedReadyReplicas == 2 && cs.Status.ReadyReplicas == 6
	})
	harness.Consistently(t, 3*time.Second, "partition 4 holds 4 pods at v1", func() (bool, string) {
		n := countImages(t, ns, "part")
		return n["registry.example/app:v1"] == 4 && n["registry.example/app:v2"] == 2, fmt.Sprint(n)
	})

	patchCloneSet(t, c, clone, `{"spec":{"updateStrategy":{"paused":true,"partition":0}}}`)
	harness.Consistently(t, 3*time.Second, "paused: nothing more is updated", func() (bool, string) {
		n := countImages(t, ns, "part")
		return n["registry.example/app:v1"] == 4, fmt.Sprint(n)
	})

	patchCloneSet(t, c, clone, `{"spec":{"updateStrategy":{"paused":false}}}`)
	waitCloneSet(t, c, ns, "part", "all updated after resume", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.UpdatedReadyReplicas == 6 && cs.Status.CurrentRevision == cs.Status.UpdateRevision
	})
}

// InPlaceIfPossible recreates pods when the change cannot be done in place (here: a new env var);
// kubectl scale works through the scale subresource; a pod labelled specified-delete is replaced.
func TestCloneSetRecreateScaleAndSpecifiedDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	clone := newCloneSet(ns, "rec", 3, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "rec", "3 ready", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.ReadyReplicas == 3 })
	before := podsByName(t, ns, "app=rec")

	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v1","env":[{"name":"MODE","value":"new"}]}]}}}}`)
	waitCloneSet(t, c, ns, "rec", "recreated with the env var", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ObservedGeneration == cs.Generation && cs.Status.UpdatedReadyReplicas == 3 && cs.Status.ReadyReplicas == 3
	})
	for name := range podsByName(t, ns, "app=rec") {
		if _, old := before[name]; old {
			t.Errorf("pod %s kept although its env changed (cannot be done in place)", name)
		}
	}

	target := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: "rec", Namespace: ns}}
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 5}}
	if err := c.SubResource("scale").Update(ctx, target, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("kubectl-style scale through the scale subresource: %v", err)
	}
	waitCloneSet(t, c, ns, "rec", "scaled to 5", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ReadyReplicas == 5 && cs.Status.LabelSelector == "app=rec"
	})

	pods := podsByName(t, ns, "app=rec")
	var victim *corev1.Pod
	for _, p := range pods {
		victim = p
		break
	}
	label := []byte(`{"metadata":{"labels":{"apps.kruise.io/specified-delete":"true"}}}`)
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, victim.Name, types.StrategicMergePatchType, label, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, "the labelled pod replaced", func() (bool, string) {
		now := podsByName(t, ns, "app=rec")
		_, still := now[victim.Name]
		ready := 0
		for _, p := range now {
			if condition(p, corev1.PodReady) == corev1.ConditionTrue {
				ready++
			}
		}
		return !still && len(now) == 5 && ready == 5, fmt.Sprintf("victim present %v, %d pods, %d ready", still, len(now), ready)
	})
	// The events carry OpenKruise's reasons: a recreating update, a deletion, creations.
	harness.Eventually(t, 30*time.Second, "events with OpenKruise's reasons", func() (bool, string) {
		evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=rec"})
		if err != nil {
			return false, err.Error()
		}
		seen := map[string]bool{}
		for _, e := range evs.Items {
			seen[e.Reason] = true
		}
		for _, want := range []string{"SuccessfulUpdatePodReCreate", "SuccessfulDelete", "SuccessfulCreate"} {
			if !seen[want] {
				return false, fmt.Sprintf("no %s event among %v", want, seen)
			}
		}
		return true, ""
	})
}

// A non-image change already pending when the update type becomes InPlaceOnly cannot be applied in
// place: the CloneSet says so in a Warning event, and no pod is deleted or recreated.
func TestCloneSetInPlaceOnlyRefusesPendingChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	clone := newCloneSet(ns, "only", 3, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromInt32(3))
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "only", "3 pods ready", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.ReadyReplicas == 3 })
	before := podsByName(t, ns, "app=only")
	// An env change waits behind the partition; then the type becomes InPlaceOnly and the partition goes.
	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v1","env":[{"name":"MODE","value":"b"}]}]}}}}`)
	waitCloneSet(t, c, ns, "only", "new revision pending behind the partition", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ObservedGeneration == cs.Generation && cs.Status.UpdateRevision != cs.Status.CurrentRevision
	})
	patchCloneSet(t, c, clone, `{"spec":{"updateStrategy":{"type":"InPlaceOnly","partition":0}}}`)
	harness.Eventually(t, 30*time.Second, "Warning InPlaceUpdateRefused on the CloneSet", func() (bool, string) {
		evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=only"})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range evs.Items {
			seen = append(seen, e.Reason)
			if e.Reason == "InPlaceUpdateRefused" && e.Type == corev1.EventTypeWarning {
				t.Logf("event: %s", e.Note)
				return true, ""
			}
		}
		return false, fmt.Sprintf("events: %v", seen)
	})
	harness.Consistently(t, 3*time.Second, "no pod deleted or recreated", func() (bool, string) {
		now := podsByName(t, ns, "app=only")
		for name, p := range before {
			if q, ok := now[name]; !ok || q.UID != p.UID {
				return false, "pod " + name + " was replaced"
			}
		}
		return len(now) == 3, fmt.Sprintf("%d pods", len(now))
	})
}

// maxSurge with InPlaceIfPossible: when every pod can be updated in place, the rollout creates no
// surge pod (OpenKruise creates them and deletes old pods: openkruise/kruise#2369); a change that
// needs recreating still uses the surge.
func TestCloneSetSurgeOnlyWhenRecreating(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas = 5
	clone := newCloneSet(ns, "surge", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.MaxSurge = ptr.To(intstr.FromInt32(3))
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "surge", "all ready", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.ReadyReplicas == replicas })
	before := podsByName(t, ns, "app=surge")
	rollout := func(patch string) (peak int) {
		patchCloneSet(t, c, clone, patch)
		harness.Eventually(t, 2*time.Minute, "rolled out", func() (bool, string) {
			peak = max(peak, len(podsByName(t, ns, "app=surge")))
			got := &appsv1alpha1.CloneSet{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(clone), got); err != nil {
				return false, err.Error()
			}
			return harness.RolledOut(replicas)(got), fmt.Sprintf("%+v", got.Status)
		})
		return peak
	}
	if peak := rollout(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`); peak != replicas {
		t.Errorf("in-place rollout with maxSurge 3: up to %d pods; want %d (no surge pod)", peak, replicas)
	}
	harness.CheckUpdatedInPlace(t, before, podsByName(t, ns, "app=surge"), replicas)
	// An env change cannot be made in place: the surge is used.
	peak := rollout(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2","env":[{"name":"X","value":"1"}]}]}}}}`)
	if peak <= replicas {
		t.Errorf("recreating rollout with maxSurge 3: at most %d pods; want a surge above %d", peak, replicas)
	}
}
