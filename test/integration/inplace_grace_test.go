package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	testingclock "k8s.io/utils/clock/testing"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/test/harness"
)

// inPlaceUpdateStrategy.gracePeriodSeconds on a real API server: Update turns the pod NotReady and
// moves its revision but leaves its containers alone; Refresh applies the recorded update only once
// the grace period has passed (by the clock, read back from the pod, as a new manager would).
func TestEngineGracePeriod(t *testing.T) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	t0 := time.Now().Truncate(time.Second)
	clk := testingclock.NewFakePassiveClock(t0)
	eng := engine.New(harness.KruiseClient(t, cfg), clk, inplace.Options{})
	pod := inplacePod(t, cs)
	get := func() *corev1.Pod {
		t.Helper()
		p, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"tier": "web"}}, Spec: *pod.Spec.DeepCopy()}
	newT := old.DeepCopy()
	newT.Labels["tier"] = "api"
	newT.Spec.Containers[0].Image = "app:v2"
	d := eng.CanUpdateInPlace(old, newT, "rev-2")
	if err := eng.Update(ctx, pod, d.Spec, engine.UpdateOptions{Reason: "image app:v2", GraceSeconds: 5}); err != nil {
		t.Fatal(err)
	}
	got := get()
	if gate := podCondition(got, appspub.InPlaceUpdateReady); gate == nil || gate.Status != corev1.ConditionFalse {
		t.Errorf("during the grace period the gate is %+v, want False", gate)
	}
	if got.Spec.Containers[0].Image != "app:v1" || got.Labels["tier"] != "web" {
		t.Errorf("the update was applied before the grace period: image %s, tier %s", got.Spec.Containers[0].Image, got.Labels["tier"])
	}
	if got.Labels[inplace.RevisionLabel] != "rev-2" || got.Annotations[appspub.InPlaceUpdateGraceKey] == "" {
		t.Errorf("revision %s, grace annotation %q; want rev-2 and the recorded update", got.Labels[inplace.RevisionLabel],
			got.Annotations[appspub.InPlaceUpdateGraceKey])
	}
	if p := inplace.Observe(got); p != inplace.Waiting {
		t.Errorf("Observe = %s, want Waiting", p)
	}
	if due, ok := inplace.GraceDue(got); !ok || !due.Equal(t0.Add(5*time.Second)) {
		t.Errorf("GraceDue = %v, %v; want %v", due, ok, t0.Add(5*time.Second))
	}

	clk.SetTime(t0.Add(4 * time.Second))
	if p, err := eng.Refresh(ctx, got, engine.Metadata{}); err != nil || p != inplace.Waiting {
		t.Fatalf("Refresh 1 s before the end of the grace period = %s, %v; want Waiting", p, err)
	}
	if again := get(); again.ResourceVersion != got.ResourceVersion {
		t.Error("Refresh wrote to the pod before the grace period ended")
	}
	clk.SetTime(t0.Add(5 * time.Second))
	if p, err := eng.Refresh(ctx, got, engine.Metadata{}); err != nil || p != inplace.Updating {
		t.Fatalf("Refresh at the end of the grace period = %s, %v; want Updating", p, err)
	}
	got = get()
	if got.Spec.Containers[0].Image != "app:v2" || got.Labels["tier"] != "api" || got.Annotations[appspub.InPlaceUpdateGraceKey] != "" {
		t.Errorf("after the grace period: image %s, tier %s, grace annotation %q; want app:v2, api, none",
			got.Spec.Containers[0].Image, got.Labels["tier"], got.Annotations[appspub.InPlaceUpdateGraceKey])
	}
	if gate := podCondition(got, appspub.InPlaceUpdateReady); gate == nil || gate.Status != corev1.ConditionFalse {
		t.Errorf("while the container restarts the gate is %+v, want False", gate)
	}
	if p := inplace.Observe(got); p != inplace.Updating {
		t.Errorf("Observe = %s, want Updating", p)
	}
}

// A template reverted during the grace period: the pod goes back to its old revision without any
// container change, and its gate opens again.
func TestEngineGracePeriodRevert(t *testing.T) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	eng := engine.New(harness.KruiseClient(t, cfg), nil, inplace.Options{})
	pod := inplacePod(t, cs)
	old := &corev1.PodTemplateSpec{Spec: *pod.Spec.DeepCopy()}
	newT := old.DeepCopy()
	newT.Spec.Containers[0].Image = "app:v2"
	if err := eng.Update(ctx, pod, eng.CanUpdateInPlace(old, newT, "rev-2").Spec, engine.UpdateOptions{GraceSeconds: 60}); err != nil {
		t.Fatal(err)
	}
	waiting, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Update(ctx, waiting, eng.CanUpdateInPlace(newT, old, "rev-1").Spec, engine.UpdateOptions{GraceSeconds: 60}); err != nil {
		t.Fatal(err)
	}
	got, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Containers[0].Image != "app:v1" || got.Labels[inplace.RevisionLabel] != "rev-1" || got.Annotations[appspub.InPlaceUpdateGraceKey] != "" {
		t.Fatalf("after the revert: image %s, revision %s, grace annotation %q; want app:v1, rev-1, none",
			got.Spec.Containers[0].Image, got.Labels[inplace.RevisionLabel], got.Annotations[appspub.InPlaceUpdateGraceKey])
	}
	if p, err := eng.Refresh(ctx, got, engine.Metadata{}); err != nil || p != inplace.Completed {
		t.Fatalf("Refresh after the revert = %s, %v; want Completed (nothing restarts)", p, err)
	}
	got, err = cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gate := podCondition(got, appspub.InPlaceUpdateReady); gate == nil || gate.Status != corev1.ConditionTrue {
		t.Errorf("after the revert the gate is %+v, want True", gate)
	}
}
