package inplace

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// ContainerPriority is a container's launch priority, as OpenKruise reads it: when the pod's
// annotation apps.kruise.io/container-launch-priority is "Ordered", minus its position (the first
// container highest, env ignored); else the integer value of its env var KRUISE_CONTAINER_PRIORITY;
// else 0. Higher starts first. The pod webhook's barrier keys come from it, so in-place batches and
// launch order agree.
func ContainerPriority(pod *corev1.Pod, name string) int {
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		return 0
	}
	if pod.Annotations[appspub.ContainerLaunchPriorityKey] == appspub.ContainerLaunchOrdered {
		return -i
	}
	env := pod.Spec.Containers[i].Env
	for j := len(env) - 1; j >= 0; j-- { // the last one counts, as for the kubelet
		if env[j].Name == appspub.ContainerLaunchPriorityEnvName {
			n, _ := strconv.Atoi(env[j].Value)
			return n
		}
	}
	return 0
}

// SplitByPriority splits the images of an in-place update into the batch to apply now (the
// containers of the highest launch priority) and the rest, applied in later batches once the
// containers of this one are ready again; next is nil with a single priority.
func SplitByPriority(pod *corev1.Pod, images map[string]string) (batch, next map[string]string) {
	if len(images) < 2 {
		return images, nil
	}
	top := 0
	for i, name := range slices.Sorted(maps.Keys(images)) {
		if p := ContainerPriority(pod, name); i == 0 || p > top {
			top = p
		}
	}
	batch, next = map[string]string{}, map[string]string{}
	for name, img := range images {
		if ContainerPriority(pod, name) == top {
			batch[name] = img
		} else {
			next[name] = img
		}
	}
	if len(next) == 0 {
		next = nil
	}
	return batch, next
}

// StartBatch records in state the batch applied now (its containers' image IDs before, to detect
// their restart) and what remains for later batches.
//
// A container the kubelet is still changing for an earlier update (the pod's gate is False and
// the container has not restarted for the update its state records) is recorded with no image ID,
// as one that has not run yet: the next container the kubelet starts may be the earlier update's
// image, a new image ID that is not this update's (a rollout right behind a rollback, soak seed
// 5), so only a container running the image this update names completes it.
func StartBatch(pod *corev1.Pod, state *appspub.InPlaceUpdateState, batch, next map[string]string, now time.Time) {
	meta := RuntimeMeta(pod)
	earlier, ok := StateOf(pod)
	if !ok || !GateFalse(pod) {
		earlier = nil
	}
	state.LastContainerStatuses = map[string]appspub.InPlaceUpdateContainerStatus{}
	for name := range batch {
		last := appspub.InPlaceUpdateContainerStatus{}
		if earlier != nil {
			if before, changed := earlier.LastContainerStatuses[name]; changed && !containerRestarted(pod, meta, name, before) {
				state.LastContainerStatuses[name] = last
				continue
			}
		}
		for _, c := range pod.Status.ContainerStatuses {
			if c.Name == name {
				last.ImageID = c.ImageID
				if m, ok := meta[name]; ok && m.ContainerID == c.ContainerID {
					last.PlainHash = m.Hashes.PlainHash
				}
			}
		}
		state.LastContainerStatuses[name] = last
	}
	state.NextContainerImages, state.PreCheckBeforeNext = next, nil
	if next == nil && len(state.ContainerBatchesRecord) == 0 {
		return // a single batch is not recorded
	}
	names := slices.Sorted(maps.Keys(batch))
	state.ContainerBatchesRecord = append(state.ContainerBatchesRecord, appspub.InPlaceUpdateContainerBatch{
		Timestamp: metav1.NewTime(now), Containers: names})
	if next != nil {
		state.PreCheckBeforeNext = &appspub.InPlaceUpdatePreCheckBeforeNext{ContainersRequiredReady: names}
	}
}

// NextBatchPatch returns the JSON patch that applies the next batch of the pod's in-place update:
// it checks the state annotation is still the one read, sets the batch's images and the new state.
func NextBatchPatch(pod *corev1.Pod, state *appspub.InPlaceUpdateState, now time.Time) ([]byte, error) {
	raw, ok := pod.Annotations[appspub.InPlaceUpdateStateKey]
	if !ok || (len(state.NextContainerImages) == 0 && len(state.NextContainerRefMetadata) == 0) {
		return nil, fmt.Errorf("pod %s/%s has no next batch to apply", pod.Namespace, pod.Name)
	}
	batch, next := SplitByPriority(pod, state.NextContainerImages)
	st := *state
	st.ContainerBatchesRecord = slices.Clone(state.ContainerBatchesRecord)
	StartBatch(pod, &st, batch, next, now)
	startEnvBatch(pod, &st, state.NextContainerRefMetadata, next)
	stateJSON, err := json.Marshal(&st)
	if err != nil {
		return nil, err
	}
	key := "/metadata/annotations/" + escape(appspub.InPlaceUpdateStateKey)
	ops := []jsonPatchOp{{Op: "test", Path: key, Value: raw}}
	images, err := imageOps(pod, batch)
	if err != nil {
		return nil, err
	}
	ops = append(ops, images...)
	ops = append(ops, jsonPatchOp{Op: "replace", Path: key, Value: string(stateJSON)})
	return json.Marshal(ops)
}

// startEnvBatch restarts, with the last image batch, the containers of later batches whose env
// reads changed metadata (nextContainerRefMetadata, as OpenKruise records them): they are recorded
// by container ID for kruise-daemon to restart (a ContainerRecreateRequest). While image batches
// remain they wait.
func startEnvBatch(pod *corev1.Pod, state *appspub.InPlaceUpdateState, refs map[string]metav1.ObjectMeta, nextImages map[string]string) {
	if len(refs) == 0 || len(nextImages) > 0 {
		state.NextContainerRefMetadata = refs
		return
	}
	state.NextContainerRefMetadata = nil
	for name := range refs {
		if _, restarts := state.LastContainerStatuses[name]; restarts {
			continue // restarts anyway, for its image
		}
		state.UpdateEnvFromMetadata = true
		for _, c := range pod.Status.ContainerStatuses {
			if c.Name == name {
				state.LastContainerStatuses[name] = appspub.InPlaceUpdateContainerStatus{ContainerID: c.ContainerID}
			}
		}
	}
}

// RuntimeMeta is kruise-daemon's report of what the runtime runs for the pod
// (apps.kruise.io/runtime-containers-meta), by container name; empty without a readable report.
func RuntimeMeta(pod *corev1.Pod) map[string]appspub.RuntimeContainerMeta {
	var set appspub.RuntimeContainerMetaSet
	if err := json.Unmarshal([]byte(pod.Annotations[appspub.RuntimeContainerMetaKey]), &set); err != nil {
		return nil
	}
	out := make(map[string]appspub.RuntimeContainerMeta, len(set.Containers))
	for _, c := range set.Containers {
		out[c.Name] = c
	}
	return out
}
