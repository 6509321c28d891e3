package engine

import (
	"encoding/json"

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
)

func (p Progress) String() string {
	switch p {
	case Updating:
		return "Updating"
	case Completed:
		return "Completed"
	default:
		return "NotUpdating"
	}
}

// Observe says where pod stands, from the pod alone.
func Observe(pod *corev1.Pod) Progress {
	if !GateFalse(pod) {
		return NotUpdating
	}
	state := &appspub.InPlaceUpdateState{}
	if err := json.Unmarshal([]byte(pod.Annotations[appspub.InPlaceUpdateStateKey]), state); err != nil {
		return Updating
	}
	if restarted(pod, state) {
		return Completed
	}
	return Updating
}

// GateFalse reports whether the pod's InPlaceUpdateReady condition is False.
func GateFalse(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == appspub.InPlaceUpdateReady {
			return c.Status == corev1.ConditionFalse
		}
	}
	return false
}

// restarted reports whether every container the update changed runs again with an imageID
// different from the one recorded before the update. (Status image names are not compared: a real
// kubelet reports them resolved, e.g. docker.io/library/app:v2 for app:v2.)
func restarted(pod *corev1.Pod, state *appspub.InPlaceUpdateState) bool {
	for name, before := range state.LastContainerStatuses {
		ok := false
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name == name && cs.ImageID != "" && cs.ImageID != before.ImageID && cs.State.Running != nil {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
