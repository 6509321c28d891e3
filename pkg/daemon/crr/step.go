// Package crr is kruise-daemon's side of ContainerRecreateRequests: for each active request of its
// node it runs the containers' preStop hooks, stops them through CRI with their grace period, waits
// for the kubelet to start them again (and, with minStartedSeconds, for them to stay up that long),
// and reports each container's state; with orderedRecreate one container at a time, in the
// request's order. failurePolicy Fail ends the request at the first failed container; Ignore goes
// on with the others. Each step is decided afresh from the request's status and the runtime's
// containers, so a restarted daemon picks up where the last one stopped. Requests are processed
// side by side (Recreator.Workers at a time), and each preStop hook is cut at the end of the
// container's grace period or after Recreator.MaxPreStop, so a hanging hook holds up only its own
// request, and that for a bounded time.
package crr

import (
	"strings"
	"time"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/daemon/criruntime"
)

// Container is what the runtime says of the newest container of a name in the pod.
type Container = criruntime.Container

// Action is what to do to one container now.
type Action int

const (
	// Wait: nothing to do yet (the kubelet has not restarted it, or it has not run long enough).
	Wait Action = iota
	// Stop: run its preStop and stop it.
	Stop
	// Done: it was recreated (the state is Succeeded).
	Done
)

// RuntimeID strips the runtime prefix of a status container ID ("containerd://abc" → "abc").
func RuntimeID(id string) string {
	if _, after, ok := strings.Cut(id, "://"); ok {
		return after
	}
	return id
}

// Decide is the action for container c of crr, in state s, given its newest runtime container cur
// (nil when the runtime has none) at now.
func Decide(crr *v1alpha1.ContainerRecreateRequest, c v1alpha1.ContainerRecreateRequestContainer,
	s v1alpha1.ContainerRecreateRequestContainerRecreateState, cur *Container, now time.Time) Action {
	original := ""
	if c.StatusContext != nil {
		original = RuntimeID(c.StatusContext.ContainerID)
	}
	restarted := cur != nil && cur.ID != original && cur.Running
	if s.IsKilled || (!forced(crr) && cur != nil && cur.ID != original) {
		if !restarted {
			return Wait
		}
		minStarted := time.Duration(0)
		if crr.Spec.Strategy != nil {
			minStarted = time.Duration(crr.Spec.Strategy.MinStartedSeconds) * time.Second
		}
		if now.Sub(cur.Started) < minStarted {
			return Wait
		}
		return Done
	}
	return Stop
}

// EndedMessage is the state message of a container stopped in a pod that has ended.
const EndedMessage = "stopped; the pod has ended, so the kubelet does not start it again"

// DecideEnded is the action for a container of a pod that has ended (phase Succeeded or Failed:
// the kubelet starts none of its containers again — a SidecarTerminator's request): stop it while
// it runs, and it is done once stopped.
func DecideEnded(s v1alpha1.ContainerRecreateRequestContainerRecreateState, cur *Container) Action {
	switch {
	case cur == nil || !cur.Running:
		return Done
	case s.IsKilled:
		return Wait // being stopped
	}
	return Stop
}

func forced(crr *v1alpha1.ContainerRecreateRequest) bool {
	return crr.Spec.Strategy != nil && crr.Spec.Strategy.ForceRecreate
}

// final reports whether a container's state is an end state.
func final(p v1alpha1.ContainerRecreateRequestPhase) bool {
	return p == v1alpha1.ContainerRecreateRequestSucceeded || p == v1alpha1.ContainerRecreateRequestFailed
}
