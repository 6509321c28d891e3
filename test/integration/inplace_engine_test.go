package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/test/harness"
)

// The engine's protocol on a real API server, with this test playing the kubelet: Update sets the
// gate and Ready False and waits for the kubelet to write Ready False itself (it has seen the gate)
// before it patches the spec, so no container changes while the pod may take traffic; Refresh
// leaves the gate False until the restarted container runs a new image, then opens it.
func TestEngineUpdateThenRefresh(t *testing.T) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	eng := engine.New(harness.KruiseClient(t, cfg), nil, inplace.Options{})
	pod := inplacePod(t, cs)
	kubelet := func(imageID string) *corev1.Pod { // the kubelet reports the app container running imageID
		t.Helper()
		st := map[string]any{"status": map[string]any{"containerStatuses": []map[string]any{
			{"name": "app", "image": "app", "imageID": imageID, "ready": true, "restartCount": 0, "state": map[string]any{"running": map[string]any{}}},
			{"name": "side", "image": "side:v1", "imageID": "side@sha256:1", "ready": true, "restartCount": 0, "state": map[string]any{"running": map[string]any{}}},
		}}}
		body, _ := json.Marshal(st)
		p, err := cs.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pod = kubelet("app@sha256:1")
	ready := func(status corev1.ConditionStatus, reason string) *corev1.Pod { // the kubelet's Ready, computed from the gates
		t.Helper()
		body, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{{Type: corev1.PodReady, Status: status, Reason: reason}}}})
		p, err := cs.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pod = ready(corev1.ConditionTrue, "")

	old := &corev1.PodTemplateSpec{Spec: *pod.Spec.DeepCopy()}
	newT := old.DeepCopy()
	newT.Spec.Containers[0].Image = "app:v2"
	d := eng.CanUpdateInPlace(old, newT, "rev-2")
	if !d.InPlace() {
		t.Fatalf("an image change must be possible in place: %v", d.RecreateReasons)
	}
	updated := make(chan error, 1)
	go func() { updated <- eng.Update(ctx, pod, d.Spec, engine.UpdateOptions{Reason: "image app:v2"}) }()
	// The kubelet sees the gate False; until it reports Ready False the spec must not change.
	harness.Eventually(t, 10*time.Second, "the gate False", func() (bool, string) {
		p, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		gate := podCondition(p, appspub.InPlaceUpdateReady)
		return gate != nil && gate.Status == corev1.ConditionFalse, fmt.Sprintf("gate %+v", gate)
	})
	// A slow kubelet: until it writes Ready False itself, the spec stays as it was.
	harness.Consistently(t, 500*time.Millisecond, "the spec unchanged before the kubelet wrote Ready False", func() (bool, string) {
		got, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		r := podCondition(got, corev1.PodReady)
		return got.Spec.Containers[0].Image == "app:v1" && r != nil && r.Status == corev1.ConditionTrue,
			fmt.Sprintf("image %s, Ready %+v (want app:v1, and Ready left to the kubelet)", got.Spec.Containers[0].Image, r)
	})
	ready(corev1.ConditionFalse, "ReadinessGatesNotReady")
	if err := <-updated; err != nil {
		t.Fatal(err)
	}
	got, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Containers[0].Image != "app:v2" || got.Labels[inplace.RevisionLabel] != "rev-2" || got.Annotations[appspub.InPlaceUpdateStateKey] == "" {
		t.Errorf("spec patch not applied: image %s, revision %s, state %q", got.Spec.Containers[0].Image,
			got.Labels[inplace.RevisionLabel], got.Annotations[appspub.InPlaceUpdateStateKey])
	}

	if p, err := eng.Refresh(ctx, got, engine.Metadata{}); err != nil || p != inplace.Updating {
		t.Fatalf("Refresh before the restart = %s, %v; want Updating", p, err)
	}
	restarted := kubelet("app@sha256:2")
	// The write that ends the update carries the workload's lifecycle state: pods/status writes a
	// pod's labels and annotations too.
	after := engine.Metadata{Labels: map[string]string{appspub.LifecycleStateKey: "Normal"},
		Annotations: map[string]string{appspub.LifecycleTimestampKey: "2026-12-04T12:00:00Z"}}
	if p, err := eng.Refresh(ctx, restarted, after); err != nil || p != inplace.Completed {
		t.Fatalf("Refresh after the restart = %s, %v; want Completed", p, err)
	}
	got, err = cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gate := podCondition(got, appspub.InPlaceUpdateReady); gate == nil || gate.Status != corev1.ConditionTrue {
		t.Errorf("after the completed Refresh the gate is %+v, want True", gate)
	}
	if got.Labels[appspub.LifecycleStateKey] != "Normal" || got.Annotations[appspub.LifecycleTimestampKey] != "2026-12-04T12:00:00Z" {
		t.Errorf("after the completed Refresh: labels %v, annotations %v; want the lifecycle state written with the gate", got.Labels, got.Annotations)
	}
	if p := inplace.Observe(got); p != inplace.NotUpdating {
		t.Errorf("after the update Observe = %s, want NotUpdating", p)
	}
}
