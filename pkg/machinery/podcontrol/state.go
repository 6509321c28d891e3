package podcontrol

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
)

// State is what every workload's planner knows of one pod, read from the pod alone.
type State struct {
	// Phase is the pod's status.phase.
	Phase corev1.PodPhase
	// Ready is the pod's Ready condition; ReadySince is when it last became True (zero when
	// unknown or not ready).
	Ready      bool
	ReadySince time.Time
	// Terminating is true once the pod has a deletionTimestamp.
	Terminating bool
	// InPlaceUpdating is true while an in-place update of the pod has not completed.
	InPlaceUpdating bool
	// Lifecycle is the pod's lifecycle state (label lifecycle.apps.kruise.io/state).
	Lifecycle appspub.LifecycleStateType
	// The hooks of the workload's spec.lifecycle against the pod (pkg/core/lifecycle): PreDeleteHeld and
	// PreUpdateHeld hold it before a deletion or an in-place update; PreNormalReleased and
	// UpdatedReleased let it become Normal after its creation or its in-place update.
	PreDeleteHeld, PreUpdateHeld, PreNormalReleased, UpdatedReleased bool
	// GraceDue is set while the pod's in-place update waits for its grace period: when its
	// container changes may be applied.
	GraceDue time.Time
}

// Observe reads pod's State under the workload's lifecycle hooks, with where its in-place update
// stands and the containers kruise-daemon must still restart for their env (inplace.Inspect).
func Observe(pod *corev1.Pod, hooks *appspub.Lifecycle) (State, inplace.Progress, []string) {
	s := State{Phase: pod.Status.Phase, Terminating: pod.DeletionTimestamp != nil}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			s.Ready, s.ReadySince = true, c.LastTransitionTime.Time
		}
	}
	h := lifecycle.Hooks(hooks)
	s.Lifecycle = lifecycle.State(pod)
	s.PreDeleteHeld = lifecycle.Holding(h.PreDelete, pod)
	s.PreUpdateHeld = lifecycle.Holding(h.InPlaceUpdate, pod)
	s.PreNormalReleased = lifecycle.Released(h.PreNormal, pod)
	if h.PreNormal == nil {
		// With no preNormal hook a pod in PreparingNormal (a CloneSet creates every pod so, as
		// OpenKruise does) becomes Normal once it is scheduled and Ready.
		s.PreNormalReleased = pod.Spec.NodeName != "" && s.Ready
	}
	s.UpdatedReleased = lifecycle.Released(h.InPlaceUpdate, pod)
	progress, recreate := inplace.Inspect(pod)
	switch progress {
	case inplace.Updating, inplace.BatchDone, inplace.Completed:
		// Completed is still updating: the write that turns the gate True ends the update, and
		// moves the lifecycle state on with it (Control.Progress).
		s.InPlaceUpdating = true
	case inplace.Waiting:
		s.InPlaceUpdating = true
		s.GraceDue, _ = inplace.GraceDue(pod)
	}
	return s, progress, recreate
}

// AvailableAt is when the pod becomes (or became) available: ready, not in an in-place update, not
// terminating, in no lifecycle action (state Normal or none), and ready for minReady. The boolean
// is false when the pod cannot become available without some other change.
func (s *State) AvailableAt(minReady time.Duration) (time.Time, bool) {
	if !s.Ready || s.InPlaceUpdating || s.Terminating || !lifecycle.Serving(s.Lifecycle) {
		return time.Time{}, false
	}
	if minReady <= 0 || s.ReadySince.IsZero() {
		// Ready with no known transition time: assume it has been ready long enough.
		return time.Time{}, true
	}
	return s.ReadySince.Add(minReady), true
}

// Available reports whether the pod counts as available at now.
func (s *State) Available(now time.Time, minReady time.Duration) bool {
	at, ok := s.AvailableAt(minReady)
	return ok && !at.After(now)
}
