package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

// What a CloneSet owns follows its selector, as in OpenKruise: a pod relabelled out of the
// selector is released (it keeps running, without the CloneSet as controller) and replaced; an
// orphan pod that matches is adopted (and counted, so one pod is scaled in); a pod named in
// podsToDelete is deleted and its name dropped from the list.
func TestCloneSetOwnership(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	clone := newCloneSet(ns, "own", 2, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	ready := func(n int32) func(*appsv1alpha1.CloneSet) bool {
		return func(cs *appsv1alpha1.CloneSet) bool {
			return cs.Status.ObservedGeneration == cs.Generation && cs.Status.Replicas == n && cs.Status.ReadyReplicas == n
		}
	}
	waitCloneSet(t, c, ns, "own", "2 ready", ready(2))
	controlled := func(p *corev1.Pod) bool {
		ref := metav1.GetControllerOf(p)
		return ref != nil && ref.UID == clone.UID
	}

	// Released: relabelled out of the selector.
	var leaving string
	for name := range podsByName(t, ns, "app=own") {
		leaving = name
		break
	}
	patch := []byte(`{"metadata":{"labels":{"app":"elsewhere"}}}`)
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, leaving, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, time.Minute, "pod "+leaving+" released and replaced", func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, leaving, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		n := len(podsByName(t, ns, "app=own"))
		return !controlled(p) && p.DeletionTimestamp == nil && n == 2, fmt.Sprintf("owners %v, %d matching pods", p.OwnerReferences, n)
	})
	waitCloneSet(t, c, ns, "own", "2 ready after the release", ready(2))

	// Adopted: an orphan pod that matches the selector.
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "own-orphan", Namespace: ns, Labels: map[string]string{"app": "own"}},
		Spec: podSpec("registry.example/app:v1")}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Adopted, then counted: one of the 3 pods is scaled in (the orphan itself, often: the newest).
	harness.Eventually(t, time.Minute, "the orphan adopted (an Adopted event) and the CloneSet back at 2 pods", func() (bool, string) {
		evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=own"})
		if err != nil {
			return false, err.Error()
		}
		adopted := false
		for _, e := range evs.Items {
			adopted = adopted || (e.Reason == "Adopted" && strings.Contains(e.Note, orphan.Name))
		}
		pods := podsByName(t, ns, "app=own")
		for _, p := range pods {
			if !controlled(p) {
				return false, "pod " + p.Name + " not controlled"
			}
		}
		return adopted && len(pods) == 2, fmt.Sprintf("%d pods, Adopted event %v", len(pods), adopted)
	})

	// podsToDelete: the pod goes, and so does its name.
	var victim string
	for name := range podsByName(t, ns, "app=own") {
		victim = name
		break
	}
	patchCloneSet(t, c, clone, fmt.Sprintf(`{"spec":{"scaleStrategy":{"podsToDelete":[%q]}}}`, victim))
	harness.Eventually(t, time.Minute, "pod "+victim+" deleted and dropped from podsToDelete", func() (bool, string) {
		got := &appsv1alpha1.CloneSet{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "own"}, got); err != nil {
			return false, err.Error()
		}
		_, alive := podsByName(t, ns, "app=own")[victim]
		return !alive && len(got.Spec.ScaleStrategy.PodsToDelete) == 0, fmt.Sprintf("alive %v, podsToDelete %v", alive, got.Spec.ScaleStrategy.PodsToDelete)
	})
	waitCloneSet(t, c, ns, "own", "2 ready again", ready(2))
}
