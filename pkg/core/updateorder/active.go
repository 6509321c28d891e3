package updateorder

import (
	"cmp"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Rank is what Kubernetes' ActivePods order reads of a pod; RankOf reads it.
type Rank struct {
	// Scheduled is true once the pod has a node.
	Scheduled bool
	Phase     corev1.PodPhase
	// Ready is the pod's Ready condition; ReadySince when it last became True (zero: unknown).
	Ready      bool
	ReadySince time.Time
	// MaxRestarts is the highest restart count of the regular containers, SidecarRestarts that of
	// the native sidecars (init containers with restartPolicy Always).
	MaxRestarts, SidecarRestarts int32
	// Created is the pod's creation time (zero: unknown).
	Created time.Time
}

// RankOf reads pod's Rank.
func RankOf(pod *corev1.Pod) Rank {
	r := Rank{Scheduled: pod.Spec.NodeName != "", Phase: pod.Status.Phase, Created: pod.CreationTimestamp.Time}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			r.Ready, r.ReadySince = true, c.LastTransitionTime.Time
		}
	}
	r.MaxRestarts, r.SidecarRestarts = Restarts(pod)
	return r
}

// Restarts returns the highest restart count among pod's regular containers and among its native
// sidecars; plain init containers do not count, as in Kubernetes.
func Restarts(pod *corev1.Pod) (regular, sidecar int32) {
	for _, c := range pod.Status.ContainerStatuses {
		regular = max(regular, c.RestartCount)
	}
	for _, c := range pod.Status.InitContainerStatuses {
		for _, ic := range pod.Spec.InitContainers {
			if ic.Name == c.Name && ic.RestartPolicy != nil && *ic.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				sidecar = max(sidecar, c.RestartCount)
			}
		}
	}
	return regular, sidecar
}

// Active is Kubernetes' ActivePods order (pkg/controller in k8s.io/kubernetes v1.32, the version
// OpenKruise v1.9.0 builds with), by which both CloneSet and SidecarSet take the pods to update
// first; negative when a goes first:
//
//  1. unscheduled before scheduled;
//  2. Pending (or no phase) < Unknown < Running;
//  3. not ready before ready;
//  4. when both are ready, ready for a shorter time first (an unknown ready time first);
//  5. a higher MaxRestarts first, then a higher SidecarRestarts first;
//  6. newer first (an unknown creation time first).
func Active(a, b Rank) int {
	return cmp.Or(TrueFirst(!a.Scheduled, !b.Scheduled), cmp.Compare(PhaseRank(a.Phase), PhaseRank(b.Phase)),
		TrueFirst(!a.Ready, !b.Ready), ReadyTime(a, b), cmp.Compare(b.MaxRestarts, a.MaxRestarts),
		cmp.Compare(b.SidecarRestarts, a.SidecarRestarts), NewerFirst(a.Created, b.Created))
}

// TrueFirst orders true first.
func TrueFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	default:
		return 1
	}
}

// PhaseRank is Kubernetes' pod phase ordinal: Pending 0, Unknown 1, Running 2, and 0 for any other
// phase (none yet, say).
func PhaseRank(p corev1.PodPhase) int {
	switch p {
	case corev1.PodUnknown:
		return 1
	case corev1.PodRunning:
		return 2
	default:
		return 0
	}
}

// ReadyTime orders two ready pods by how long they have been ready, the shorter first (an unknown
// ready time first); 0 unless both are ready.
func ReadyTime(a, b Rank) int {
	if !a.Ready || !b.Ready {
		return 0
	}
	return NewerFirst(a.ReadySince, b.ReadySince)
}

// NewerFirst orders a zero time first, then later times before earlier ones.
func NewerFirst(a, b time.Time) int {
	if c := TrueFirst(a.IsZero(), b.IsZero()); c != 0 {
		return c
	}
	return b.Compare(a)
}
