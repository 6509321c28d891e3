package sidecarterminator

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The env names that mark a sidecar, and the pod condition written.
const (
	TerminateEnv          = "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT"
	TerminateWithImageEnv = "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE"

	SidecarTerminated corev1.PodConditionType = "SidecarTerminated"
)

// IsSidecar reports whether c is a sidecar.
func IsSidecar(c *corev1.Container) bool {
	for _, e := range c.Env {
		if (e.Name == TerminateEnv && strings.EqualFold(e.Value, "true")) || (e.Name == TerminateWithImageEnv && e.Value != "") {
			return true
		}
	}
	return false
}

// split returns the pod's sidecars and main containers by name.
func split(pod *corev1.Pod) (sidecars, mains sets.Set[string]) {
	sidecars, mains = sets.New[string](), sets.New[string]()
	for i := range pod.Spec.Containers {
		if IsSidecar(&pod.Spec.Containers[i]) {
			sidecars.Insert(pod.Spec.Containers[i].Name)
		} else {
			mains.Insert(pod.Spec.Containers[i].Name)
		}
	}
	return sidecars, mains
}

// exited reports whether every container of names has terminated (with exit code 0 when
// succeeded), as the pod's status says; false while the status lacks a container.
func exited(pod *corev1.Pod, names sets.Set[string], succeeded bool) bool {
	if len(pod.Status.ContainerStatuses) != len(pod.Spec.Containers) {
		return false
	}
	for _, s := range pod.Status.ContainerStatuses {
		if !names.Has(s.Name) {
			continue
		}
		if t := s.State.Terminated; t == nil || (succeeded && t.ExitCode != 0) {
			return false
		}
	}
	return true
}

// Due reports whether the pod's sidecars are to be stopped: it is not being deleted, not Pending,
// its restartPolicy is not Always, it has a sidecar still running, and its main containers have
// all exited (OnFailure: all exited 0).
func Due(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodPending || pod.Spec.RestartPolicy == corev1.RestartPolicyAlways {
		return false
	}
	sidecars, mains := split(pod)
	if sidecars.Len() == 0 || exited(pod, sidecars, false) {
		return false
	}
	return exited(pod, mains, pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure)
}

// Phase is the phase the pod ends in: Succeeded when every main container exited 0.
func Phase(pod *corev1.Pod) corev1.PodPhase {
	if _, mains := split(pod); exited(pod, mains, true) {
		return corev1.PodSucceeded
	}
	return corev1.PodFailed
}

// Running are the sidecars that have not terminated, sorted.
func Running(pod *corev1.Pod) []string {
	sidecars, _ := split(pod)
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			sidecars.Delete(s.Name)
		}
	}
	return sets.List(sidecars)
}
