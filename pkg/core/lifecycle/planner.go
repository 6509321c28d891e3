package lifecycle

import appspub "github.com/kruise-ng/kruise/apis/apps/pub"

// Planner is the lifecycle part of a workload's planner (CloneSet, Advanced StatefulSet, Advanced
// DaemonSet): it appends the moves it decides to *Into, the plan's list.
type Planner struct {
	// Hooks are the workload's spec.lifecycle (nil: none).
	Hooks *appspub.Lifecycle
	Into  *[]Move
	// Acted, if set, records the pods held (the plan acts on them).
	Acted map[string]bool
}

// HoldForDelete keeps pod (in state current) in PreparingDelete while the preDelete hook holds it
// (held) before the deletion (reason); true when it does.
func (p Planner) HoldForDelete(pod string, current appspub.LifecycleStateType, held bool, reason string) bool {
	return p.hold(pod, current, held, appspub.LifecycleStatePreparingDelete, Hooks(p.Hooks).PreDelete, "preDelete", reason)
}

// HoldForUpdate keeps pod (in state current) in PreparingUpdate while the inPlaceUpdate hook
// holds it (held) before the update (reason); true when it does.
func (p Planner) HoldForUpdate(pod string, current appspub.LifecycleStateType, held bool, reason string) bool {
	return p.hold(pod, current, held, appspub.LifecycleStatePreparingUpdate, Hooks(p.Hooks).InPlaceUpdate, "inPlaceUpdate", reason)
}

func (p Planner) hold(pod string, current appspub.LifecycleStateType, held bool, to appspub.LifecycleStateType,
	hook *appspub.LifecycleHook, name, reason string) bool {
	if !held {
		return false
	}
	if m := Hold(pod, current, to, hook, name, reason); m != nil {
		*p.Into = append(*p.Into, *m)
	}
	if p.Acted != nil {
		p.Acted[pod] = true
	}
	return true
}

// Move moves pod to state to (reason).
func (p Planner) Move(pod string, to appspub.LifecycleStateType, reason string) {
	*p.Into = append(*p.Into, Move{Pod: pod, To: to, Reason: reason})
}

// Progress makes the move a pod that the plan does not act on makes by itself (the package's
// Progress); true when it moves.
func (p Planner) Progress(pod string, s appspub.LifecycleStateType, updating, preNormalReleased, updatedReleased bool) bool {
	to, reason, ok := Progress(s, updating, preNormalReleased, updatedReleased)
	if ok {
		p.Move(pod, to, reason)
	}
	return ok
}

// Unneeded lets a pod held for an action that is no longer needed serve again: out of
// PreparingDelete when no deletion is coming (deleting false), out of PreparingUpdate when no
// update is (updating false); true when it moves.
func (p Planner) Unneeded(pod string, s appspub.LifecycleStateType, deleting, updating, updatedReleased bool) bool {
	switch {
	case s == appspub.LifecycleStatePreparingDelete && !deleting:
		p.Move(pod, appspub.LifecycleStateNormal, "no deletion needed any more")
	case s == appspub.LifecycleStatePreparingUpdate && !updating:
		p.Move(pod, AfterUpdate(updatedReleased), "no update needed any more")
	default:
		return false
	}
	return true
}
