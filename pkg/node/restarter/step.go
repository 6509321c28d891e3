package restarter

import (
	"strings"
	"time"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/node/criruntime"
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
