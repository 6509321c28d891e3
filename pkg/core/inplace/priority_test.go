package inplace

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

func priorityPod(ann string, prio ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}}
	if ann != "" {
		p.Annotations[appspub.ContainerLaunchPriorityKey] = ann
	}
	for i, v := range prio {
		c := corev1.Container{Name: string(rune('a' + i)), Image: "img:1"}
		if v != "" {
			c.Env = []corev1.EnvVar{{Name: appspub.ContainerLaunchPriorityEnvName, Value: v}}
		}
		p.Spec.Containers = append(p.Spec.Containers, c)
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, ImageID: "id-" + c.Name})
	}
	return p
}

func TestSplitByPriority(t *testing.T) {
	all := map[string]string{"a": "img:2", "b": "img:2", "c": "img:2"}
	for _, tc := range []struct {
		name        string
		pod         *corev1.Pod
		batch, next string
	}{
		{"no priorities: one batch", priorityPod("", "", "", ""), "abc", ""},
		{"env: highest first", priorityPod("", "1", "10", "1"), "b", "ac"},
		{"env: unset is 0, negative after", priorityPod("", "-5", "", ""), "bc", "a"},
		{"Ordered: first container first", priorityPod("Ordered", "", "", ""), "a", "bc"},
		{"Ordered wins over env (as OpenKruise)", priorityPod("Ordered", "", "", "5"), "a", "bc"},
	} {
		batch, next := SplitByPriority(tc.pod, all)
		keys := func(m map[string]string) string {
			var b strings.Builder
			for _, k := range sortedKeys(m) {
				b.WriteString(k)
			}
			return b.String()
		}
		if keys(batch) != tc.batch || keys(next) != tc.next {
			t.Errorf("%s: batch %q next %q; want %q %q", tc.name, keys(batch), keys(next), tc.batch, tc.next)
		}
	}
}

func TestBatchesRecordedAndNextPatch(t *testing.T) {
	pod := priorityPod("Ordered", "", "", "")
	state := &appspub.InPlaceUpdateState{Revision: "r2"}
	batch, next := SplitByPriority(pod, map[string]string{"a": "img:2", "c": "img:2"})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	StartBatch(pod, state, batch, next, now)
	if len(state.LastContainerStatuses) != 1 || state.LastContainerStatuses["a"].ImageID != "id-a" ||
		state.NextContainerImages["c"] != "img:2" || state.PreCheckBeforeNext == nil ||
		strings.Join(state.PreCheckBeforeNext.ContainersRequiredReady, ",") != "a" || len(state.ContainerBatchesRecord) != 1 {
		t.Fatalf("state after the first batch: %+v", state)
	}
	raw, _ := json.Marshal(state)
	pod.Annotations[appspub.InPlaceUpdateStateKey] = string(raw)
	data, err := NextBatchPatch(pod, state, now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, want := range []string{`"op":"test","path":"/metadata/annotations/apps.kruise.io~1inplace-update-state"`,
		`"op":"replace","path":"/spec/containers/2/image","value":"img:2"`, `\"containerBatchesRecord\":[{`, `\"containers\":[\"c\"]`} {
		if !strings.Contains(got, want) {
			t.Errorf("next batch patch lacks %s: %s", want, got)
		}
	}
	if _, after, _ := strings.Cut(got, `"op":"replace","path":"/metadata/annotations`); strings.Contains(after, "nextContainerImages") {
		t.Errorf("the last batch leaves images for later: %s", got)
	}
	single := &appspub.InPlaceUpdateState{}
	StartBatch(pod, single, map[string]string{"a": "img:2"}, nil, now)
	if single.ContainerBatchesRecord != nil || single.PreCheckBeforeNext != nil {
		t.Errorf("a single batch is recorded: %+v", single)
	}
}

// A later batch of env-only restarts that OpenKruise recorded (nextContainerRefMetadata) is carried
// on: with the last image batch its containers are recorded for kruise-daemon to restart.
func TestNextBatchRestartsEnvContainersOpenKruiseRecorded(t *testing.T) {
	pod := priorityPod("Ordered", "", "", "")
	pod.Status.ContainerStatuses[1].ContainerID = "containerd://b1"
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	state := &appspub.InPlaceUpdateState{Revision: "r2", UpdateImages: true,
		LastContainerStatuses:    map[string]appspub.InPlaceUpdateContainerStatus{"a": {ImageID: "id-a-old"}},
		NextContainerImages:      map[string]string{"c": "img:2"},
		NextContainerRefMetadata: map[string]metav1.ObjectMeta{"b": {Labels: map[string]string{"tier": "gold"}}}}
	raw, _ := json.Marshal(state)
	pod.Annotations[appspub.InPlaceUpdateStateKey] = string(raw)
	data, err := NextBatchPatch(pod, state, now)
	if err != nil {
		t.Fatal(err)
	}
	var ops []struct{ Op, Path, Value string }
	_ = json.Unmarshal(data, &ops)
	var next appspub.InPlaceUpdateState
	if err := json.Unmarshal([]byte(ops[len(ops)-1].Value), &next); err != nil {
		t.Fatal(err)
	}
	if !next.UpdateEnvFromMetadata || next.LastContainerStatuses["b"].ContainerID != "containerd://b1" ||
		next.NextContainerRefMetadata != nil || next.NextContainerImages != nil {
		t.Errorf("state after the last batch: %+v", next)
	}
	// Only env restarts left: they are the next batch.
	state.NextContainerImages = nil
	raw, _ = json.Marshal(state)
	pod.Annotations[appspub.InPlaceUpdateStateKey] = string(raw)
	if _, err := NextBatchPatch(pod, state, now); err != nil {
		t.Errorf("env-only next batch: %v", err)
	}
}
