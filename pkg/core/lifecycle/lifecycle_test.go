package lifecycle

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

func TestHoldingAndReleased(t *testing.T) {
	h := &appspub.LifecycleHook{LabelsHandler: map[string]string{"a": "1", "b": "2"}, FinalizersHandler: []string{"x/f"}}
	pod := func(labels map[string]string, finalizers ...string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels, Finalizers: finalizers}}
	}
	for _, tc := range []struct {
		name              string
		pod               *corev1.Pod
		holding, released bool
	}{
		{"nothing", pod(nil), false, false},
		{"one label", pod(map[string]string{"a": "1"}), true, false},
		{"label with another value", pod(map[string]string{"a": "9"}), false, false},
		{"the finalizer", pod(nil, "x/f"), true, false},
		{"all of them", pod(map[string]string{"a": "1", "b": "2"}, "x/f"), true, true},
	} {
		if got := Holding(h, tc.pod); got != tc.holding {
			t.Errorf("%s: Holding = %v", tc.name, got)
		}
		if got := Released(h, tc.pod); got != tc.released {
			t.Errorf("%s: Released = %v", tc.name, got)
		}
	}
	if Holding(nil, pod(nil)) || !Released(nil, pod(nil)) {
		t.Error("a nil hook holds a pod")
	}
}

func TestPatch(t *testing.T) {
	data, err := Patch(appspub.LifecycleStatePreparingDelete, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]map[string]string
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got["metadata"]["labels"][appspub.LifecycleStateKey] != "PreparingDelete" ||
		got["metadata"]["annotations"][appspub.LifecycleTimestampKey] != "2026-01-02T03:04:05Z" {
		t.Errorf("patch %s", data)
	}
}
