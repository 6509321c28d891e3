package inplace

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// Progress is where a pod stands in an in-place update.
type Progress int

const (
	// NotUpdating: the InPlaceUpdateReady gate is not held False.
	NotUpdating Progress = iota
	// Updating: the gate is held False and the restarted containers do not all run the new images
	// yet (or the gate is held without a readable update state: not this engine's to release).
	Updating
	// Completed: the gate is still False but every restarted container runs again on a new image.
	Completed
	// Waiting: the pod carries a deferred update (Deferred) that waits for its grace period;
	// GraceDue says until when.
	Waiting
	// BatchDone: the containers of one launch-priority batch run again and are ready; the next
	// batch (state nextContainerImages) is due.
	BatchDone
)

func (p Progress) String() string {
	switch p {
	case Updating:
		return "Updating"
	case Completed:
		return "Completed"
	case Waiting:
		return "Waiting"
	case BatchDone:
		return "BatchDone"
	default:
		return "NotUpdating"
	}
}

// Observe says where pod stands, from the pod alone.
func Observe(pod *corev1.Pod) Progress {
	p, _ := Inspect(pod)
	return p
}

// Inspect is Observe and, for an Updating pod, the containers kruise-daemon must restart for their
// env (NeedsRecreate), from one reading of the update state.
func Inspect(pod *corev1.Pod) (Progress, []string) {
	if _, ok := pod.Annotations[appspub.InPlaceUpdateGraceKey]; ok {
		return Waiting, nil
	}
	if !GateFalse(pod) {
		return NotUpdating, nil
	}
	state, ok := StateOf(pod)
	if !ok {
		return Updating, nil
	}
	if !restarted(pod, state) || (state.UpdateResources && !resized(pod)) {
		return Updating, Recreates(pod, state)
	}
	if len(state.NextContainerImages) > 0 || len(state.NextContainerRefMetadata) > 0 {
		if state.PreCheckBeforeNext != nil && !ready(pod, state.PreCheckBeforeNext.ContainersRequiredReady) {
			return Updating, nil
		}
		return BatchDone, nil
	}
	return Completed, nil
}

// ready reports whether the named containers report ready.
func ready(pod *corev1.Pod, names []string) bool {
	for _, name := range names {
		ok := false
		for _, c := range pod.Status.ContainerStatuses {
			ok = ok || (c.Name == name && c.Ready)
		}
		if !ok {
			return false
		}
	}
	return true
}

// resized reports whether the kubelet has applied the pod's resources: no resize pending or in
// progress, and every container's CPU and memory in status equal to its spec.
func resized(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if (c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress) && c.Status == corev1.ConditionTrue {
			return false
		}
	}
	for _, c := range pod.Spec.Containers {
		var st *corev1.ContainerStatus
		for i := range pod.Status.ContainerStatuses {
			if pod.Status.ContainerStatuses[i].Name == c.Name {
				st = &pod.Status.ContainerStatuses[i]
			}
		}
		if st == nil || st.Resources == nil {
			return false
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if !sameQuantity(c.Resources.Requests, st.Resources.Requests, name) || !sameQuantity(c.Resources.Limits, st.Resources.Limits, name) {
				return false
			}
		}
	}
	return true
}

func sameQuantity(a, b corev1.ResourceList, name corev1.ResourceName) bool {
	x, okA := a[name]
	y, okB := b[name]
	return okA == okB && (!okA || x.Cmp(y) == 0)
}

// GraceDue is when the pod's deferred update may be applied: its update's start plus the grace
// period; false when the pod has no deferred update. An unreadable one is due at once, so that
// Refresh reports it.
func GraceDue(pod *corev1.Pod) (time.Time, bool) {
	d, err := DeferredOf(pod)
	if d == nil {
		return time.Time{}, err != nil
	}
	state, ok := StateOf(pod)
	if !ok {
		return time.Time{}, true
	}
	return d.Due(state.UpdateTimestamp.Time), true
}

func StateOf(pod *corev1.Pod) (*appspub.InPlaceUpdateState, bool) {
	state := &appspub.InPlaceUpdateState{}
	if err := json.Unmarshal([]byte(pod.Annotations[appspub.InPlaceUpdateStateKey]), state); err != nil {
		return nil, false
	}
	return state, true
}

// GateFalse reports whether the pod's InPlaceUpdateReady condition is False.
func GateFalse(pod *corev1.Pod) bool {
	return ConditionIs(pod, appspub.InPlaceUpdateReady, corev1.ConditionFalse)
}

// restarted reports whether every container the update changed runs again on the new spec: its
// image ID differs from the one recorded before the update, or, when kruise-daemon reported the
// container's spec hash before and reports now on the running container, that hash changed (an
// image of the same digest under another tag keeps the image ID). Resized containers are not
// recorded (see resized). A container whose image ID did not change counts too when it runs the
// image its spec names already (sameImage, as OpenKruise checks): an update that undid one the
// kubelet had not acted on yet (a rollback right behind a rollout) restarts nothing, and without
// this it would wait for a restart forever.
func restarted(pod *corev1.Pod, state *appspub.InPlaceUpdateState) bool {
	meta := RuntimeMeta(pod)
	for name, before := range state.LastContainerStatuses {
		if !containerRestarted(pod, meta, name, before) {
			return false
		}
	}
	return true
}

// containerRestarted is restarted for the one container name, recorded as before; meta is
// kruise-daemon's report (RuntimeMeta).
func containerRestarted(pod *corev1.Pod, meta map[string]appspub.RuntimeContainerMeta, name string, before appspub.InPlaceUpdateContainerStatus) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != name || cs.State.Running == nil {
			continue
		}
		if before.ContainerID != "" { // restarted for its env only: another container runs
			return cs.ContainerID != before.ContainerID
		}
		// A container that reported no image ID before the update (the pod was not running
		// yet, or the kubelet was still changing it for an earlier update) is done only once it
		// runs the image its spec names: the first one it runs may be the old one, which the
		// kubelet has not replaced yet.
		if cs.ImageID != "" && cs.ImageID != before.ImageID && (before.ImageID != "" || sameImage(specImage(pod, name), cs.Image)) {
			return true
		}
		if cs.ImageID != "" && cs.ImageID == before.ImageID && sameImage(specImage(pod, name), cs.Image) {
			return true
		}
		if m, reported := meta[name]; reported && before.PlainHash != 0 && m.ContainerID == cs.ContainerID &&
			m.Hashes.PlainHash != before.PlainHash {
			return true
		}
	}
	return false
}

// specImage is the image the spec gives the named container or init container ("" for none).
func specImage(pod *corev1.Pod, name string) string {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range list {
			if c.Name == name {
				return c.Image
			}
		}
	}
	return ""
}

// sameImage reports whether a container status's image (status) is the spec's image (spec): equal,
// or equal once the registry prefix a real kubelet resolves short names to is taken off both
// (docker.io/library/app:v2 for app:v2) and an image named with no tag or digest is given the
// :latest tag the kubelet reports.
func sameImage(spec, status string) bool {
	if spec == "" || status == "" {
		return false
	}
	short := func(s string) string {
		for _, prefix := range []string{"docker.io/library/", "docker.io/"} {
			if rest, ok := strings.CutPrefix(s, prefix); ok {
				s = rest
				break
			}
		}
		// No tag and no digest: the kubelet reports the image as :latest.
		if last := s[strings.LastIndex(s, "/")+1:]; !strings.ContainsAny(last, ":@") {
			s += ":latest"
		}
		return s
	}
	return spec == status || short(spec) == short(status)
}

// ContainerID is the ID of the named container in pod's status ("" when it has none).
func ContainerID(pod *corev1.Pod, name string) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == name {
			return cs.ContainerID
		}
	}
	return ""
}

// NeedsRecreate lists the containers of pod's in-place update that restart only to read changed
// metadata into their env and still run the container they ran before the update: kruise-daemon
// must restart them. Empty when the pod is not in such an update.
func NeedsRecreate(pod *corev1.Pod) []string {
	_, names := Inspect(pod)
	return names
}

// Recreates is NeedsRecreate on pod's decoded update state.
func Recreates(pod *corev1.Pod, state *appspub.InPlaceUpdateState) []string {
	if !state.UpdateEnvFromMetadata {
		return nil
	}
	var names []string
	for name, before := range state.LastContainerStatuses {
		if before.ContainerID != "" && ContainerID(pod, name) == before.ContainerID {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
