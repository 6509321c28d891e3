package lifecycle

import (
	"encoding/json"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// Hooks is l, or no hooks when l is nil (spec.lifecycle unset).
func Hooks(l *appspub.Lifecycle) *appspub.Lifecycle {
	if l == nil {
		return &appspub.Lifecycle{}
	}
	return l
}

// State is the pod's lifecycle state ("" for a pod that never had one).
func State(pod *corev1.Pod) appspub.LifecycleStateType {
	return appspub.LifecycleStateType(pod.Labels[appspub.LifecycleStateKey])
}

// Serving reports whether a pod in state s may count as available: no lifecycle action holds it.
func Serving(s appspub.LifecycleStateType) bool {
	return s == "" || s == appspub.LifecycleStateNormal
}

// Holding reports whether hook h holds a pod before its action: any of its labels or finalizers is
// on the pod. A nil hook holds nothing.
func Holding(h *appspub.LifecycleHook, pod *corev1.Pod) bool {
	if h == nil {
		return false
	}
	for k, v := range h.LabelsHandler {
		if got, ok := pod.Labels[k]; ok && got == v {
			return true
		}
	}
	for _, f := range h.FinalizersHandler {
		if slices.Contains(pod.Finalizers, f) {
			return true
		}
	}
	return false
}

// Released reports whether hook h lets a pod go on after its action: no hook, or all of its labels
// and finalizers are on the pod.
func Released(h *appspub.LifecycleHook, pod *corev1.Pod) bool {
	if h == nil {
		return true
	}
	for k, v := range h.LabelsHandler {
		if got, ok := pod.Labels[k]; !ok || got != v {
			return false
		}
	}
	for _, f := range h.FinalizersHandler {
		if !slices.Contains(pod.Finalizers, f) {
			return false
		}
	}
	return true
}

// Metadata returns the label and annotation that put a pod in state s at now.
func Metadata(s appspub.LifecycleStateType, now time.Time) (labels, annotations map[string]string) {
	return map[string]string{appspub.LifecycleStateKey: string(s)},
		map[string]string{appspub.LifecycleTimestampKey: now.UTC().Format(time.RFC3339)}
}

// Patch returns the merge patch that moves a pod to state s at now.
func Patch(s appspub.LifecycleStateType, now time.Time) ([]byte, error) {
	l, a := Metadata(s, now)
	return json.Marshal(map[string]any{"metadata": map[string]any{"labels": l, "annotations": a}})
}

// Progress is the move a pod that its workload does not act on makes by itself, from its state s
// once its hooks let it: PreparingNormal → Normal when the preNormal hook is satisfied (released);
// Updating → Updated when its in-place update is over (not updating), straight to Normal when the
// inPlaceUpdate hook is satisfied already (updatedReleased); Updated → Normal then. ok is false
// when the pod stays. (PreparingUpdate and PreparingDelete wait for the workload's decision.)
func Progress(s appspub.LifecycleStateType, updating, preNormalReleased, updatedReleased bool) (to appspub.LifecycleStateType, reason string, ok bool) {
	switch {
	case s == appspub.LifecycleStatePreparingNormal && preNormalReleased:
		return appspub.LifecycleStateNormal, "preNormal hook satisfied", true
	case s == appspub.LifecycleStateUpdating && !updating:
		// Finished, whatever revision is now the update revision (a newer one updates it again
		// from Normal, as in OpenKruise).
		return AfterUpdate(updatedReleased), "in-place update completed", true
	case s == appspub.LifecycleStateUpdated && updatedReleased:
		return appspub.LifecycleStateNormal, "inPlaceUpdate hook satisfied after the update", true
	}
	return "", "", false
}

// AfterUpdate is the state of a pod whose in-place update is over (or no longer needed): Updated
// while the inPlaceUpdate hook is not satisfied, Normal once it is (updatedReleased).
func AfterUpdate(updatedReleased bool) appspub.LifecycleStateType {
	if updatedReleased {
		return appspub.LifecycleStateNormal
	}
	return appspub.LifecycleStateUpdated
}

// Move is a lifecycle state change a workload's planner decides for one pod: holding it for a
// hook, or releasing it.
type Move struct {
	Pod string
	To  appspub.LifecycleStateType
	// MarkNotReady holds the pod NotReady (KruisePodReady False) while the hook holds it (the
	// hook's markPodNotReady).
	MarkNotReady bool
	Reason       string
}

// Hold is the move that puts pod (in state current) in state to while hook (named name: preDelete,
// inPlaceUpdate) holds it before an action (reason); nil when the pod is in that state already.
// The planner calls it for a pod the hook holds, and leaves the pod alone otherwise.
func Hold(pod string, current, to appspub.LifecycleStateType, hook *appspub.LifecycleHook, name, reason string) *Move {
	if current == to {
		return nil
	}
	return &Move{Pod: pod, To: to, MarkNotReady: hook != nil && hook.MarkPodNotReady, Reason: name + " hook before: " + reason}
}
