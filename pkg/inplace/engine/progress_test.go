package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

func TestObserve(t *testing.T) {
	state := `{"revision":"r2","updateTimestamp":"2026-11-29T12:00:00Z","lastContainerStatuses":{"app":{"imageID":"app@sha256:1"}}}`
	running := &corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	waiting := &corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	pod := func(gate corev1.ConditionStatus, ann string, imageID string, st *corev1.ContainerState) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}}
		if ann != "" {
			p.Annotations[appspub.InPlaceUpdateStateKey] = ann
		}
		if gate != "" {
			p.Status.Conditions = []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: gate}}
		}
		if st != nil {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", ImageID: imageID, State: *st}}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want Progress
	}{
		{"no gate condition", pod("", state, "app@sha256:2", running), NotUpdating},
		{"gate True", pod(corev1.ConditionTrue, state, "app@sha256:2", running), NotUpdating},
		{"gate False, same imageID", pod(corev1.ConditionFalse, state, "app@sha256:1", running), Updating},
		{"gate False, new imageID, not running yet", pod(corev1.ConditionFalse, state, "app@sha256:2", waiting), Updating},
		{"gate False, new imageID, empty", pod(corev1.ConditionFalse, state, "", running), Updating},
		{"gate False, new imageID running", pod(corev1.ConditionFalse, state, "app@sha256:2", running), Completed},
		{"gate False, container missing", pod(corev1.ConditionFalse, state, "", nil), Updating},
		{"gate False without a readable state: not ours", pod(corev1.ConditionFalse, "{", "app@sha256:2", running), Updating},
		{"gate False, nothing restarted (metadata-only update)",
			pod(corev1.ConditionFalse, `{"revision":"r2","updateTimestamp":"2026-11-29T12:00:00Z"}`, "app@sha256:1", running), Completed},
	} {
		if got := Observe(tc.pod); got != tc.want {
			t.Errorf("%s: Observe = %s, want %s", tc.name, got, tc.want)
		}
	}
}
