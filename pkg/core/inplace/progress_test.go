package inplace

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

func TestObserveResize(t *testing.T) {
	res := func(cpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	pod := func(spec, status string, conds ...corev1.PodConditionType) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			appspub.InPlaceUpdateStateKey: `{"revision":"r2","updateTimestamp":"2026-11-29T12:00:00Z","lastContainerStatuses":{},"updateResources":true}`}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: res(spec)}}}}
		r := res(status)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Resources: &r}}
		p.Status.Conditions = []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse}}
		for _, c := range conds {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue})
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want Progress
	}{
		{"status still old", pod("200m", "100m"), Updating},
		{"applied", pod("200m", "0.2"), Completed},
		{"applied, resize still in progress", pod("200m", "200m", corev1.PodResizeInProgress), Updating},
		{"pending", pod("200m", "200m", corev1.PodResizePending), Updating},
	} {
		if got := Observe(tc.pod); got != tc.want {
			t.Errorf("%s: Observe = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestObserveBatches(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pod := func(sideReady bool) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{appspub.InPlaceUpdateStateKey: `{"revision":"r2",` +
			`"updateTimestamp":"2026-11-29T12:00:00Z","lastContainerStatuses":{"side":{"imageID":"side@1"}},"nextContainerImages":{"app":"app:2"},` +
			`"preCheckBeforeNext":{"containersRequiredReady":["side"]}}`}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "side", ImageID: "side@2", State: running, Ready: sideReady},
					{Name: "app", ImageID: "app@1", State: running, Ready: true}}}}
	}
	if got := Observe(pod(false)); got != Updating {
		t.Errorf("first batch restarted, not ready: %s, want Updating", got)
	}
	if got := Observe(pod(true)); got != BatchDone {
		t.Errorf("first batch ready: %s, want BatchDone", got)
	}
}

// A retag (same digest under another tag) keeps the image ID; kruise-daemon's report of the
// kubelet's spec hash tells the restarted container.
func TestObserveRetagThroughContainerMeta(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pod := func(meta string, containerID string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{appspub.InPlaceUpdateStateKey: `{"revision":"r2",` +
			`"updateTimestamp":"2026-11-29T12:00:00Z","lastContainerStatuses":{"app":{"imageID":"app@sha256:1","plainHash":17}}}`}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ImageID: "app@sha256:1", ContainerID: containerID, State: running}}}}
		if meta != "" {
			p.Annotations[appspub.RuntimeContainerMetaKey] = meta
		}
		return p
	}
	for _, tc := range []struct {
		name, meta, id string
		want           Progress
	}{
		{"no report: the image ID rule waits", "", "containerd://new", Updating},
		{"the report still shows the old spec", `{"containers":[{"name":"app","containerID":"containerd://old","restartCount":0,"hashes":{"plainHash":17}}]}`, "containerd://old", Updating},
		{"the report lags the status", `{"containers":[{"name":"app","containerID":"containerd://old","restartCount":0,"hashes":{"plainHash":99}}]}`, "containerd://new", Updating},
		{"the running container has the new spec hash", `{"containers":[{"name":"app","containerID":"containerd://new","restartCount":1,"hashes":{"plainHash":99}}]}`, "containerd://new", Completed},
	} {
		if got := Observe(pod(tc.meta, tc.id)); got != tc.want {
			t.Errorf("%s: Observe = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestObserveEnvFromMetadataRestart(t *testing.T) {
	state := `{"revision":"r2","updateTimestamp":"2026-11-29T12:00:00Z","updateEnvFromMetadata":true,` +
		`"lastContainerStatuses":{"app":{"containerID":"containerd://old"}}}`
	pod := func(id string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{appspub.InPlaceUpdateStateKey: state}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: id, ImageID: "app@sha256:1",
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	}
	old, restarted := pod("containerd://old"), pod("containerd://new")
	if got := Observe(old); got != Updating {
		t.Errorf("the old container still runs: %s, want Updating", got)
	}
	if names := NeedsRecreate(old); len(names) != 1 || names[0] != "app" {
		t.Errorf("NeedsRecreate = %v, want [app]", names)
	}
	if got := Observe(restarted); got != Completed {
		t.Errorf("another container runs (same image): %s, want Completed", got)
	}
	if names := NeedsRecreate(restarted); len(names) != 0 {
		t.Errorf("NeedsRecreate after the restart = %v", names)
	}
}

// A rollback right behind a rollout the kubelet had not acted on: the spec names again the image
// the container still runs, its image ID never changes, and nothing restarts -- the update is
// complete. A rollout to another tag of the same digest still waits for the restart.
func TestObserveUndoneBeforeTheKubeletActed(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pod := func(specImage, statusImage string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{appspub.InPlaceUpdateStateKey: `{"revision":"r1",` +
			`"updateTimestamp":"2026-11-29T12:00:00Z","lastContainerStatuses":{"app":{"imageID":"app@sha256:1"}}}`}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: specImage}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: statusImage, ImageID: "app@sha256:1", State: running}}}}
	}
	for _, tc := range []struct {
		name, spec, status string
		want               Progress
	}{
		{"the spec names the running image", "app:v1", "app:v1", Completed},
		{"as a real kubelet resolves it", "app:v1", "docker.io/library/app:v1", Completed},
		{"another tag, same digest, not restarted yet", "app:v2", "app:v1", Updating},
		{"another registry", "registry.local/app:v1", "docker.io/library/app:v1", Updating},
		{"no tag is latest", "app", "docker.io/library/app:latest", Completed},
		{"a registry with a port, no tag", "registry.local:5000/app", "registry.local:5000/app:latest", Completed},
	} {
		if got := Observe(pod(tc.spec, tc.status)); got != tc.want {
			t.Errorf("%s: Observe = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// A pod updated in place before its containers reported an image ID (Pending, soak seed 5): the
// first container it runs may be the old one, which is no restart onto the new spec.
func TestObservePendingAtTheUpdate(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pod := func(statusImage string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{appspub.InPlaceUpdateStateKey: `{"revision":"r2",` +
			`"updateTimestamp":"2026-12-06T12:00:00Z","lastContainerStatuses":{"app":{}}}`}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v4"}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: statusImage, ImageID: "sha256:" + statusImage, State: running}}}}
	}
	if got := Observe(pod("app:v5")); got != Updating {
		t.Errorf("running the image of the revision before: Observe = %s, want Updating", got)
	}
	if got := Observe(pod("app:v4")); got != Completed {
		t.Errorf("running the spec's image: Observe = %s, want Completed", got)
	}
}

// A rollout right behind a rollback the kubelet was still acting on (soak seed 5): the pod, at
// v6, was updated back to v5, its container stopped for it, and the spec names v6 again. The
// kubelet may start the v5 container it was about to run first, a new image ID that is not the
// update's: only the container running v6 completes it, whether the update saw the container
// stopped or (a cache behind) still running v6.
func TestObserveRolloutBehindAnUnfinishedRollback(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	stopped := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	now := metav1.Now().Time
	for seen, st := range map[string]corev1.ContainerState{"stopped": stopped, "running v6": running} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{appspub.InPlaceUpdateStateKey: `{"revision":"v5",` +
			`"updateTimestamp":"2026-12-06T22:39:42Z","lastContainerStatuses":{"app":{"imageID":"app@sha256:6"}}}`}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v5"}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "app:v6", ImageID: "app@sha256:6", ContainerID: "c1", State: st}}}}
		state := &appspub.InPlaceUpdateState{Revision: "v6"}
		StartBatch(pod, state, map[string]string{"app": "app:v6"}, nil, now)
		raw, err := json.Marshal(state)
		if err != nil {
			t.Fatal(err)
		}
		updated := func(image string, id string) *corev1.Pod {
			p := pod.DeepCopy()
			p.Annotations[appspub.InPlaceUpdateStateKey] = string(raw)
			p.Spec.Containers[0].Image = "app:v6"
			p.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "app", Image: image, ImageID: id, ContainerID: "c2", State: running}
			return p
		}
		if got := Observe(updated("app:v5", "app@sha256:5")); got != Updating {
			t.Errorf("seen %s at the update, then running v5: Observe = %s, want Updating", seen, got)
		}
		if got := Observe(updated("app:v6", "app@sha256:6")); got != Completed {
			t.Errorf("seen %s at the update, then running v6: Observe = %s, want Completed", seen, got)
		}
	}
}

// A pod taken out for its update before its spec is written (the kubelet's answer awaited) has its
// gate False already, with the state of an earlier update that has completed: its containers are
// recorded as they run, image ID and kruise-daemon's spec hash, even when the kubelet reports the
// image under another tag of the same digest (the real node's registry, whose app:v1 and app:v2
// share one). Only a container still changing for the earlier update is recorded without.
func TestStartBatchAfterTheTakeOut(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		appspub.InPlaceUpdateStateKey:   `{"revision":"v1","updateTimestamp":"2026-12-06T12:00:00Z","lastContainerStatuses":{"app":{"imageID":"app@sha256:0"}}}`,
		appspub.RuntimeContainerMetaKey: `{"containers":[{"name":"app","containerID":"c1","restartCount":1,"hashes":{"plainHash":17}}]}`}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "reg/app:v1"}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "reg/app:v2", ImageID: "app@sha256:1", ContainerID: "c1", State: running}}}}
	for name, tc := range map[string]struct {
		earlier string
		want    appspub.InPlaceUpdateContainerStatus
	}{
		"an earlier update completed": {`{"app":{"imageID":"app@sha256:0"}}`, appspub.InPlaceUpdateContainerStatus{ImageID: "app@sha256:1", PlainHash: 17}},
		"no earlier update recorded":  {"", appspub.InPlaceUpdateContainerStatus{ImageID: "app@sha256:1", PlainHash: 17}},
		"the earlier one not done":    {`{"app":{"imageID":"app@sha256:1"}}`, appspub.InPlaceUpdateContainerStatus{}},
	} {
		p := pod.DeepCopy()
		if tc.earlier == "" {
			delete(p.Annotations, appspub.InPlaceUpdateStateKey)
		} else {
			p.Annotations[appspub.InPlaceUpdateStateKey] = `{"revision":"v1","updateTimestamp":"2026-12-06T12:00:00Z","lastContainerStatuses":` + tc.earlier + `}`
		}
		state := &appspub.InPlaceUpdateState{Revision: "v2"}
		StartBatch(p, state, map[string]string{"app": "reg/app:v2"}, nil, metav1.Now().Time)
		if got := state.LastContainerStatuses["app"]; got.ImageID != tc.want.ImageID || got.PlainHash != tc.want.PlainHash {
			t.Errorf("%s: recorded %+v, want %+v", name, got, tc.want)
		}
	}
}
