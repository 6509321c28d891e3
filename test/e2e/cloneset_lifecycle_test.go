package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

const (
	warmedLabel = "example.io/warmed"
	holdLabel   = "example.io/hold-update"
	drainFinal  = "example.io/drain"
)

// Lifecycle hooks, with this test as the user's hook controller: new pods wait in PreparingNormal
// until it labels them warmed; an in-place update waits in PreparingUpdate (NotReady) until it
// removes its hold label, and stays Updated until it puts the label back; a scale-in waits in
// PreparingDelete (NotReady) until it removes its finalizer.
func TestCloneSetLifecycleHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas = 3
	clone := newCloneSet(ns, "hooked", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	clone.Spec.Lifecycle = &appspub.Lifecycle{
		PreNormal:     &appspub.LifecycleHook{LabelsHandler: map[string]string{warmedLabel: "true"}},
		InPlaceUpdate: &appspub.LifecycleHook{LabelsHandler: map[string]string{holdLabel: "true"}, MarkPodNotReady: true},
		PreDelete:     &appspub.LifecycleHook{FinalizersHandler: []string{drainFinal}, MarkPodNotReady: true},
	}
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	pods := func() map[string]*corev1.Pod { return podsByName(t, ns, "app=hooked") }
	patchPod := func(name, patch string) {
		t.Helper()
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { // let the namespace go
		for name := range pods() {
			_, _ = cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		}
	})
	stateOf := func(p *corev1.Pod) string { return p.Labels[appspub.LifecycleStateKey] }

	// preNormal: ready but not available until warmed.
	waitCloneSet(t, c, ns, "hooked", "3 ready pods", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.ReadyReplicas == replicas })
	for name, p := range pods() {
		if stateOf(p) != "PreparingNormal" {
			t.Errorf("new pod %s is in %q, want PreparingNormal", name, stateOf(p))
		}
	}
	got := &appsv1alpha1.CloneSet{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "hooked"}, got); err != nil || got.Status.AvailableReplicas != 0 {
		t.Errorf("available %d before the preNormal hook is satisfied; want 0 (%v)", got.Status.AvailableReplicas, err)
	}
	for name := range pods() { // the user's controller: warmed, holds updates, drains before deletion
		patchPod(name, fmt.Sprintf(`{"metadata":{"labels":{%q:"true",%q:"true"},"finalizers":[%q]}}`, warmedLabel, holdLabel, drainFinal))
	}
	waitCloneSet(t, c, ns, "hooked", "3 available Normal pods", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.AvailableReplicas == replicas })
	before := pods()
	for name, p := range before {
		if stateOf(p) != "Normal" {
			t.Errorf("warmed pod %s is in %q, want Normal", name, stateOf(p))
		}
	}

	// inPlaceUpdate: one pod at a time (maxUnavailable 1) waits for the user.
	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	var held string
	harness.Eventually(t, 30*time.Second, "a pod in PreparingUpdate", func() (bool, string) {
		for name, p := range pods() {
			if stateOf(p) == "PreparingUpdate" {
				held = name
			}
		}
		return held != "", ""
	})
	// The state is written first, then KruisePodReady False (markPodNotReady): wait for both.
	harness.Eventually(t, 10*time.Second, "the held pod NotReady", func() (bool, string) {
		p := pods()[held]
		return condition(p, appspub.KruisePodReadyConditionType) == corev1.ConditionFalse, describe(p)
	})
	harness.Consistently(t, 2*time.Second, "the held pod is NotReady and not updated; no other pod moves", func() (bool, string) {
		ps := pods()
		p := ps[held]
		if p.Spec.Containers[0].Image != "registry.example/app:v1" || condition(p, corev1.PodReady) != corev1.ConditionFalse ||
			condition(p, appspub.KruisePodReadyConditionType) != corev1.ConditionFalse {
			return false, describe(p)
		}
		for name, o := range ps {
			if name != held && (stateOf(o) != "Normal" || o.Spec.Containers[0].Image != "registry.example/app:v1") {
				return false, name + ": " + stateOf(o)
			}
		}
		return true, ""
	})
	seen := map[string][]string{} // states each pod went through
	harness.Eventually(t, 2*time.Minute, "every pod updated through its hook", func() (bool, string) {
		ps := pods()
		done := 0
		for name, p := range ps {
			st := stateOf(p)
			if n := len(seen[name]); n == 0 || seen[name][n-1] != st {
				seen[name] = append(seen[name], st)
			}
			switch st {
			case "PreparingUpdate":
				patchPod(name, fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, holdLabel)) // release
			case "Updated":
				if p.Spec.Containers[0].Image != "registry.example/app:v2" {
					return false, name + " Updated on the old image"
				}
				patchPod(name, fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, holdLabel)) // done after the update
			case "Normal":
				if p.Spec.Containers[0].Image == "registry.example/app:v2" {
					done++
				}
			}
		}
		return done == replicas, fmt.Sprint(seen)
	})
	for name, states := range seen {
		if !slices.Equal(states, []string{"Normal", "PreparingUpdate", "Updating", "Updated", "Normal"}) &&
			!slices.Equal(states, []string{"PreparingUpdate", "Updating", "Updated", "Normal"}) {
			t.Errorf("pod %s went through %v", name, states)
		}
	}
	harness.CheckUpdatedInPlace(t, before, pods(), replicas)

	// preDelete: the scaled-in pod waits in PreparingDelete, NotReady, until the finalizer goes.
	patchCloneSet(t, c, clone, `{"spec":{"replicas":2}}`)
	var leaving string
	harness.Eventually(t, 30*time.Second, "a pod in PreparingDelete", func() (bool, string) {
		for name, p := range pods() {
			if stateOf(p) == "PreparingDelete" && condition(p, corev1.PodReady) == corev1.ConditionFalse {
				leaving = name
			}
		}
		return leaving != "", ""
	})
	harness.Consistently(t, 2*time.Second, "the pod is kept while its finalizer holds it", func() (bool, string) {
		p, ok := pods()[leaving]
		return ok && p.DeletionTimestamp == nil, fmt.Sprint(ok)
	})
	patchPod(leaving, `{"metadata":{"finalizers":null}}`)
	harness.Eventually(t, 30*time.Second, "the released pod deleted", func() (bool, string) {
		_, ok := pods()[leaving]
		return !ok, ""
	})
	waitCloneSet(t, c, ns, "hooked", "2 available", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.Replicas == 2 && cs.Status.AvailableReplicas == 2
	})
}
