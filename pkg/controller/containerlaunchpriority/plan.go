package containerlaunchpriority

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// Barrier is what the planner knows of a pod's barrier ConfigMap.
type Barrier struct {
	// Exists is false when there is no ConfigMap of the barrier's name.
	Exists bool
	// OwnerUID is the UID of the pod of the same name that owns it; empty when no such pod does.
	OwnerUID types.UID
	// Keys are its data keys.
	Keys map[string]bool
}

// Plan is what to do for one pod; the zero Plan does nothing.
type Plan struct {
	// Blocked: a ConfigMap of the barrier's name that is not a pod's barrier is in the way; it is
	// left alone.
	Blocked bool
	// Recreate deletes a barrier left by an earlier pod of the same name before creating one.
	Recreate bool
	// Create creates the barrier with Release as its keys.
	Create bool
	// Release are the keys to add (highest priority first).
	Release []string
	// Complete marks the pod: every priority is released.
	Complete bool
	// Reason says why, for logs and events.
	Reason string
}

// Asks reports whether the pod's containers wait on a barrier (the pod webhook injected it).
func Asks(pod *corev1.Pod) bool {
	return len(priorities(pod)) > 0
}

// Due reports whether the pod's barrier may still need a key: it asks, is not marked completed,
// is not being deleted and its containers are not all ready.
func Due(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Annotations[appspub.ContainerLaunchPriorityCompletedKey] == "true" || !Asks(pod) {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.ContainersReady && c.Status == corev1.ConditionTrue {
			return false
		}
	}
	return true
}

// BarrierName is the name of the pod's barrier ConfigMap.
func BarrierName(pod *corev1.Pod) string { return pod.Name + appspub.BarrierConfigMapSuffix }

// priorities maps each container that waits on the barrier to its priority, read from the key of
// its KRUISE_CONTAINER_BARRIER env (p_<priority>); a key that is not of that form is not waited on
// here.
func priorities(pod *corev1.Pod) map[string]int {
	out := map[string]int{}
	for _, c := range pod.Spec.Containers {
		for _, e := range c.Env {
			if e.Name != appspub.ContainerLaunchBarrierEnvName || e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil {
				continue
			}
			if p, err := strconv.Atoi(strings.TrimPrefix(e.ValueFrom.ConfigMapKeyRef.Key, appspub.BarrierKeyPrefix)); err == nil &&
				strings.HasPrefix(e.ValueFrom.ConfigMapKeyRef.Key, appspub.BarrierKeyPrefix) {
				out[c.Name] = p
			}
		}
	}
	return out
}

// Key is the barrier's key of priority p.
func Key(p int) string { return appspub.BarrierKeyPrefix + strconv.Itoa(p) }

// PlanPod decides what the pod's barrier needs. Released are the priorities at or above the
// highest one of a container not ready yet (all of them once every container is ready): those
// containers may start; the others wait. A pod marked completed only needs its barrier back when
// it was deleted (its containers' restarts read it).
func PlanPod(pod *corev1.Pod, b Barrier) Plan {
	prios := priorities(pod)
	if len(prios) == 0 || pod.DeletionTimestamp != nil {
		return Plan{}
	}
	if b.Exists && b.OwnerUID != pod.UID {
		if b.OwnerUID == "" {
			return Plan{Blocked: true, Reason: fmt.Sprintf("ConfigMap %s exists and is not this pod's barrier: its containers wait on it, Kruise leaves it alone", BarrierName(pod))}
		}
		return Plan{Recreate: true, Reason: fmt.Sprintf("ConfigMap %s was left by an earlier pod of the same name", BarrierName(pod))}
	}
	ready := map[string]bool{}
	for _, s := range pod.Status.ContainerStatuses {
		ready[s.Name] = s.Ready
	}
	completed := pod.Annotations[appspub.ContainerLaunchPriorityCompletedKey] == "true"
	all := make([]int, 0, len(prios))
	top, waiting := 0, false
	for name, p := range prios {
		all = append(all, p)
		if !ready[name] && !completed && (!waiting || p > top) {
			top, waiting = p, true
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	slices.Reverse(all) // highest first
	plan := Plan{Create: !b.Exists}
	for _, p := range all {
		if waiting && p < top {
			break
		}
		if !b.Keys[Key(p)] {
			plan.Release = append(plan.Release, Key(p))
		}
	}
	plan.Complete = !completed && (!waiting || top == all[len(all)-1])
	switch {
	case !waiting:
		plan.Reason = "every container is ready"
	case top == all[len(all)-1]:
		plan.Reason = fmt.Sprintf("priority %d is the lowest: every container may start", top)
	default:
		plan.Reason = fmt.Sprintf("containers of priority %d may start; lower ones wait until they are ready", top)
	}
	return plan
}
