package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/test/harness"
)

// newStatefulSet is an Advanced StatefulSet of replicas pods labelled app=NAME, in place where
// possible, with the InPlaceUpdateReady readiness gate.
func newStatefulSet(ns, name string, replicas int32, policy appsv1.PodManagementPolicyType) *appsv1beta1.StatefulSet {
	labels := map[string]string{"app": name}
	pod := podSpec("registry.example/app:v1")
	pod.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
	return &appsv1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1beta1.StatefulSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			ServiceName: name, PodManagementPolicy: policy,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)}, Spec: pod},
			UpdateStrategy: appsv1beta1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1beta1.StatefulSetRollingUpdateStrategy{PodUpdatePolicy: appsv1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy}}}}
}

func waitStatefulSet(t *testing.T, c client.Client, ns, name, what string, cond func(*appsv1beta1.StatefulSet) bool) *appsv1beta1.StatefulSet {
	t.Helper()
	return harness.WaitStatefulSet(t, c, 90*time.Second, ns, name, what, cond)
}

func patchStatefulSet(t *testing.T, c client.Client, set *appsv1beta1.StatefulSet, patch string) {
	t.Helper()
	if err := c.Patch(context.Background(), set, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// ordinalsOf are the ordinals of pods of set, ascending.
func ordinalsOf(set string, pods map[string]*corev1.Pod) []int {
	var out []int
	for name := range pods {
		out = append(out, ordinal.OrdinalOf(set, name))
	}
	sort.Ints(out)
	return out
}

// An OrderedReady set creates its pods one at a time, by ascending ordinal, each once the one
// before is ready; each pod has its stable identity; a scale-in deletes from the highest ordinal.
func TestStatefulSetOrderedReadyIdentity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newStatefulSet(ns, "ordered", 4, appsv1.OrderedReadyPodManagement)
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "ordered", "4 ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == 4 })
	pods := podsByName(t, ns, "app=ordered")
	if got := ordinalsOf("ordered", pods); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("ordinals %v, want 0..3", got)
	}
	for i := 1; i < 4; i++ {
		prev, cur := pods[ordinal.PodName("ordered", i-1)], pods[ordinal.PodName("ordered", i)]
		var readyAt metav1.Time
		for _, cond := range prev.Status.Conditions {
			if cond.Type == corev1.PodReady {
				readyAt = cond.LastTransitionTime
			}
		}
		if cur.CreationTimestamp.Before(&readyAt) {
			t.Errorf("%s created at %v, before %s was ready at %v", cur.Name, cur.CreationTimestamp, prev.Name, readyAt)
		}
	}
	for name, p := range pods {
		ord := fmt.Sprint(ordinal.OrdinalOf("ordered", name))
		if p.Spec.Hostname != name || p.Spec.Subdomain != "ordered" || p.Labels[appsv1.StatefulSetPodNameLabel] != name ||
			p.Labels[appsv1.PodIndexLabel] != ord || !hasGate(p, appspub.KruisePodReadyConditionType) || !hasGate(p, appspub.InPlaceUpdateReady) {
			t.Errorf("pod %s: hostname %q subdomain %q labels %v gates %v", name, p.Spec.Hostname, p.Spec.Subdomain, p.Labels, p.Spec.ReadinessGates)
		}
		if ref := metav1.GetControllerOf(p); ref == nil || ref.APIVersion != "apps.kruise.io/v1beta1" || ref.Kind != "StatefulSet" {
			t.Errorf("pod %s controller %v", name, ref)
		}
	}

	// Scaled through the scale subresource, as kubectl scale and an HPA do.
	scale := &autoscalingv1.Scale{}
	if err := c.SubResource("scale").Get(ctx, set, scale); err != nil || scale.Spec.Replicas != 4 || scale.Status.Selector != "app=ordered" {
		t.Fatalf("scale subresource: %+v, %v", scale, err)
	}
	deleted := watchDeletions(t, ns, "app=ordered")
	scale.Spec.Replicas = 1
	if err := c.SubResource("scale").Update(ctx, set, client.WithSubResourceBody(scale)); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, "scaled in to 1", func() (bool, string) {
		got := ordinalsOf("ordered", podsByName(t, ns, "app=ordered"))
		return slices.Equal(got, []int{0}), fmt.Sprint(got)
	})
	if got := deleted(3); !slices.Equal(got, []string{"ordered-3", "ordered-2", "ordered-1"}) {
		t.Errorf("deleted in the order %v, want ordered-3, ordered-2, ordered-1", got)
	}
}

// watchDeletions records the order in which pods get a deletionTimestamp from now on. The func it
// returns gives the order once n pods are recorded (or after 10 s): a list can show a deletion
// before this watch delivers it.
func watchDeletions(t *testing.T, ns, selector string) func(n int) []string {
	t.Helper()
	w, err := cs.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var (
		mu    sync.Mutex
		order []string
	)
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			mu.Lock()
			if ok && (p.DeletionTimestamp != nil || ev.Type == watch.Deleted) && !slices.Contains(order, p.Name) {
				order = append(order, p.Name)
			}
			mu.Unlock()
		}
	}()
	return func(n int) []string {
		var got []string
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			mu.Lock()
			got = slices.Clone(order)
			mu.Unlock()
			if len(got) >= n || time.Now().After(deadline) {
				return got
			}
		}
	}
}

// A Parallel set rolls a new image out in place above its partition, never more than
// maxUnavailable pods NotReady at once, every pod keeping its UID; partition 0 finishes it.
func TestStatefulSetRollsOutInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas, maxUnavailable = 12, 3
	set := newStatefulSet(ns, "inplace", replicas, appsv1.ParallelPodManagement)
	set.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(maxUnavailable))
	set.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(int32(4))
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "inplace", "all ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == replicas })
	before := podsByName(t, ns, "app=inplace")
	notReady, stop := watchNotReady(t, ns, "app=inplace")
	patchStatefulSet(t, c, set, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	waitStatefulSet(t, c, ns, "inplace", "8 updated above the partition", func(s *appsv1beta1.StatefulSet) bool {
		return s.Status.UpdatedReadyReplicas == replicas-4 && s.Status.ReadyReplicas == replicas
	})
	for name, p := range podsByName(t, ns, "app=inplace") {
		updated := p.Spec.Containers[0].Image == "registry.example/app:v2"
		if ord := ordinal.OrdinalOf("inplace", name); updated != (ord >= 4) {
			t.Errorf("pod %s (ordinal %d) runs %s; partition 4 updates ordinals 4 and above", name, ord, p.Spec.Containers[0].Image)
		}
	}
	patchStatefulSet(t, c, set, `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}`)
	waitStatefulSet(t, c, ns, "inplace", "rolled out", harness.StatefulSetRolledOut(replicas))
	stop()
	if peak := notReady(); peak > maxUnavailable {
		t.Errorf("up to %d pods were NotReady at once; maxUnavailable is %d", peak, maxUnavailable)
	}
	harness.CheckUpdatedInPlace(t, before, podsByName(t, ns, "app=inplace"), replicas)
}

// reserveOrdinals skips ordinals (the set extends past them) and deletes the pod of an ordinal
// reserved later.
func TestStatefulSetReserveOrdinals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newStatefulSet(ns, "reserved", 3, appsv1.ParallelPodManagement)
	set.Spec.ReserveOrdinals = []intstr.IntOrString{intstr.FromInt32(1)}
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "reserved", "3 ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == 3 })
	if got := ordinalsOf("reserved", podsByName(t, ns, "app=reserved")); !slices.Equal(got, []int{0, 2, 3}) {
		t.Fatalf("ordinals %v, want [0 2 3]", got)
	}
	kept := podsByName(t, ns, "app=reserved")["reserved-3"].UID
	patchStatefulSet(t, c, set, `{"spec":{"reserveOrdinals":[1,"2-2"]}}`)
	harness.Eventually(t, 60*time.Second, "ordinal 2 reserved", func() (bool, string) {
		got := ordinalsOf("reserved", podsByName(t, ns, "app=reserved"))
		return slices.Equal(got, []int{0, 3, 4}), fmt.Sprint(got)
	})
	if p := podsByName(t, ns, "app=reserved")["reserved-3"]; p.UID != kept {
		t.Errorf("reserved-3 was recreated")
	}
}

// A pod that ends (Failed, or Succeeded) is replaced by a new pod of the same ordinal.
func TestStatefulSetReplacesFinishedPods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newStatefulSet(ns, "finished", 2, appsv1.OrderedReadyPodManagement)
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "finished", "2 ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == 2 })
	for _, phase := range []corev1.PodPhase{corev1.PodFailed, corev1.PodSucceeded} {
		old := podsByName(t, ns, "app=finished")["finished-1"]
		old.Status.Phase = phase
		if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, old, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(t, 60*time.Second, "finished-1 replaced after "+string(phase), func() (bool, string) {
			p := podsByName(t, ns, "app=finished")["finished-1"]
			if p == nil {
				return false, "no pod"
			}
			return p.UID != old.UID && condition(p, corev1.PodReady) == corev1.ConditionTrue, describe(p)
		})
	}
}

// A set written as v1alpha1 is stored and run as v1beta1.
func TestStatefulSetV1alpha1(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	beta := newStatefulSet(ns, "alpha", 2, appsv1.ParallelPodManagement)
	alpha := &appsv1alpha1.StatefulSet{}
	if err := alpha.ConvertFrom(beta); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, alpha); err != nil {
		t.Fatal(err)
	}
	got := waitStatefulSet(t, c, ns, "alpha", "2 ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == 2 })
	if !strings.HasPrefix(got.Status.UpdateRevision, "alpha-") {
		t.Errorf("update revision %q", got.Status.UpdateRevision)
	}
}

// B3 and B4: an OrderedReady set rolled to a bad image stops at its first pod, reports the stuck
// rollout (Progressing False, ProgressDeadlineExceeded, a Warning event) after the deadline; the
// fix is one apply: the broken pod is updated without waiting for it to become ready.
func TestStatefulSetBrokenRolloutIsReportedAndFixedByOneApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newStatefulSet(ns, "broken", 3, appsv1.OrderedReadyPodManagement)
	set.Annotations = map[string]string{"apps.kruise.io/progress-deadline-seconds": "5"}
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "broken", "3 ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == 3 })
	patchStatefulSet(t, c, set, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:broken"}]}}}}`)
	stuck := waitStatefulSet(t, c, ns, "broken", "stuck rollout reported", func(s *appsv1beta1.StatefulSet) bool {
		for _, cond := range s.Status.Conditions {
			if cond.Type == "Progressing" && cond.Status == corev1.ConditionFalse && cond.Reason == "ProgressDeadlineExceeded" {
				return true
			}
		}
		return false
	})
	if stuck.Status.UpdatedReplicas != 1 {
		t.Errorf("updated %d pods with a bad image, want 1 (the rollout stops at the first)", stuck.Status.UpdatedReplicas)
	}
	harness.Eventually(t, 30*time.Second, "a ProgressDeadlineExceeded event", func() (bool, string) {
		evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == "broken" && e.Reason == "ProgressDeadlineExceeded" && e.Type == corev1.EventTypeWarning {
				return true, e.Note
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})
	patchStatefulSet(t, c, set, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v3"}]}}}}`)
	waitStatefulSet(t, c, ns, "broken", "fixed by one apply", harness.StatefulSetRolledOut(3))
}

// An inPlaceUpdate hook holds each pod in PreparingUpdate (NotReady) until the user's controller
// removes its label, and keeps it Updated after the update until the label is back; a preDelete
// hook holds a scale-in the same way.
func TestStatefulSetLifecycleHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newStatefulSet(ns, "hooks", 2, appsv1.OrderedReadyPodManagement)
	hook := &appspub.LifecycleHook{LabelsHandler: map[string]string{"example.com/hold": "true"}, MarkPodNotReady: true}
	set.Spec.Lifecycle = &appspub.Lifecycle{InPlaceUpdate: hook, PreDelete: hook}
	set.Spec.Template.Labels["example.com/hold"] = "true"
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "hooks", "2 ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == 2 })
	patchStatefulSet(t, c, set, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	state := func(name string) (string, string) {
		p := podsByName(t, ns, "app=hooks")[name]
		if p == nil {
			return "", ""
		}
		return p.Labels[appspub.LifecycleStateKey], p.Spec.Containers[0].Image
	}
	harness.Eventually(t, 30*time.Second, "hooks-1 held in PreparingUpdate", func() (bool, string) {
		s, img := state("hooks-1")
		return s == "PreparingUpdate" && img == "registry.example/app:v1", s + " " + img
	})
	harness.Consistently(t, 3*time.Second, "hooks-1 stays held", func() (bool, string) {
		s, img := state("hooks-1")
		return s == "PreparingUpdate" && img == "registry.example/app:v1", s + " " + img
	})
	release := func(pod string) {
		t.Helper()
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, pod, types.MergePatchType, []byte(`{"metadata":{"labels":{"example.com/hold":null}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	release("hooks-1")
	harness.Eventually(t, 30*time.Second, "hooks-1 updated in place once released", func() (bool, string) {
		st, img := state("hooks-1")
		return img == "registry.example/app:v2" && st == "Updated", st + " " + img + "; events: " + eventNotes(t, ns)
	})
	// The hook's labels back on the pod say the user's controller is done with it: Normal again,
	// and the next pod is held in its turn.
	hold := func(pod string) {
		t.Helper()
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, pod, types.MergePatchType, []byte(`{"metadata":{"labels":{"example.com/hold":"true"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hold("hooks-1")
	harness.Eventually(t, 30*time.Second, "hooks-1 Normal, hooks-0 held", func() (bool, string) {
		s1, _ := state("hooks-1")
		s0, _ := state("hooks-0")
		return s1 == "Normal" && s0 == "PreparingUpdate", s1 + " " + s0
	})
	release("hooks-0")
	harness.Eventually(t, 30*time.Second, "hooks-0 updated in place once released", func() (bool, string) {
		st, img := state("hooks-0")
		return img == "registry.example/app:v2" && st == "Updated", st + " " + img
	})
	hold("hooks-0")
	waitStatefulSet(t, c, ns, "hooks", "rolled out", harness.StatefulSetRolledOut(2))

	patchStatefulSet(t, c, set, `{"spec":{"replicas":1}}`)
	harness.Eventually(t, 30*time.Second, "hooks-1 held in PreparingDelete", func() (bool, string) {
		s, _ := state("hooks-1")
		return s == "PreparingDelete", s
	})
	release("hooks-1")
	harness.Eventually(t, 30*time.Second, "hooks-1 deleted once released", func() (bool, string) {
		_, ok := podsByName(t, ns, "app=hooks")["hooks-1"]
		return !ok, fmt.Sprint(ok)
	})
}

// OnDelete updates a pod only when it is deleted; paused updates nothing, and once resumed
// InPlaceOnly rolls the image change in place.
func TestStatefulSetOnDeletePausedAndInPlaceOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newStatefulSet(ns, "ondelete", 2, appsv1.ParallelPodManagement)
	set.Spec.UpdateStrategy = appsv1beta1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "ondelete", "2 ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == 2 })
	patchStatefulSet(t, c, set, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	harness.Consistently(t, 3*time.Second, "OnDelete: no pod updated", func() (bool, string) {
		for _, p := range podsByName(t, ns, "app=ondelete") {
			if p.Spec.Containers[0].Image != "registry.example/app:v1" {
				return false, describe(p)
			}
		}
		return true, ""
	})
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "ondelete-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, "ondelete-0 created again at v2", func() (bool, string) {
		p := podsByName(t, ns, "app=ondelete")["ondelete-0"]
		return p != nil && p.Spec.Containers[0].Image == "registry.example/app:v2", fmt.Sprint(p != nil)
	})

	only := newStatefulSet(ns, "only", 2, appsv1.ParallelPodManagement)
	only.Spec.UpdateStrategy.RollingUpdate.PodUpdatePolicy = appsv1beta1.InPlaceOnlyStatefulSetPodUpdatePolicy
	only.Spec.UpdateStrategy.RollingUpdate.Paused = true
	if err := c.Create(ctx, only); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "only", "2 ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == 2 })
	patchStatefulSet(t, c, only, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	harness.Consistently(t, 3*time.Second, "paused: no pod updated", func() (bool, string) {
		for _, p := range podsByName(t, ns, "app=only") {
			if p.Spec.Containers[0].Image != "registry.example/app:v1" {
				return false, describe(p)
			}
		}
		return true, ""
	})
	patchStatefulSet(t, c, only, `{"spec":{"updateStrategy":{"rollingUpdate":{"paused":false}}}}`)
	waitStatefulSet(t, c, ns, "only", "resumed and rolled out in place", harness.StatefulSetRolledOut(2))
}

// An orphan pod named as one of the set's pods and matching its selector is adopted (not created
// again); a pod relabelled out of the selector is released and keeps running.
func TestStatefulSetAdoptsAndReleases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "adopt-0", Namespace: ns, Labels: map[string]string{"app": "adopt"}},
		Spec: podSpec("registry.example/app:v1")}
	orphan, err := cs.CoreV1().Pods(ns).Create(ctx, orphan, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set := newStatefulSet(ns, "adopt", 2, appsv1.ParallelPodManagement)
	set.Spec.UpdateStrategy.RollingUpdate.PodUpdatePolicy = appsv1beta1.RecreateStatefulSetPodUpdatePolicy
	set.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType
	set.Spec.UpdateStrategy.RollingUpdate = nil
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "adopt", "2 pods", func(s *appsv1beta1.StatefulSet) bool { return s.Status.Replicas == 2 })
	p := podsByName(t, ns, "app=adopt")["adopt-0"]
	if p == nil || p.UID != orphan.UID {
		t.Fatalf("adopt-0 was replaced, not adopted")
	}
	if ref := metav1.GetControllerOf(p); ref == nil || ref.Kind != "StatefulSet" || ref.Name != "adopt" {
		t.Fatalf("adopt-0's controller %v", ref)
	}
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, "adopt-1", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"gone"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "adopt-1 released", func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "adopt-1", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return metav1.GetControllerOf(p) == nil && p.DeletionTimestamp == nil, fmt.Sprint(p.OwnerReferences)
	})
}

// eventNotes are the reasons and notes of the events in ns, for failure messages.
func eventNotes(t *testing.T, ns string) string {
	t.Helper()
	evs, err := cs.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, e := range evs.Items {
		out = append(out, e.Reason+": "+e.Note)
	}
	return strings.Join(out, " | ")
}
