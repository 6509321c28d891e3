package daemonset

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
	"github.com/kruise-ng/kruise/pkg/core/updateorder"
)

// Plan is what one reconcile does, with a reason for every action.
type Plan struct {
	// Creates are the daemon pods to create, by ascending node name.
	Creates []Creation
	// Deletes are pods to delete: extra, misscheduled, finished, on gone nodes, or old pods a
	// surge update replaced.
	Deletes []Deletion
	// Updates are pods to move to the update revision, in place or by recreate.
	Updates []Update
	// Resumes are pods whose deferred in-place update's grace period is over.
	Resumes []string
	// Lifecycle are the lifecycle state changes (pkg/core/lifecycle).
	Lifecycle []LifecycleMove
	// Notes say what the plan waits for.
	Notes []string
	// Next is when the plan may change without any event (a pod becoming available after
	// minReadySeconds, a back-off ending); zero for never.
	Next time.Time
}

// Creation is a daemon pod to create on a node.
type Creation struct {
	Node, Revision, Reason string
}

// Deletion is a pod to delete.
type Deletion struct {
	Pod, Node, Reason string
	// Failed: the pod failed; its node backs off before it gets the next one.
	Failed bool
}

// UpdateMode is how a pod moves to the update revision.
type UpdateMode int

const (
	// UpdateInPlace changes the pod through the in-place engine.
	UpdateInPlace UpdateMode = iota
	// UpdateRecreate deletes the pod; a later plan creates the node's pod again at the update
	// revision.
	UpdateRecreate
)

// Update is a pod to move to the update revision.
type Update struct {
	Pod  string
	Mode UpdateMode
	// Spec is the in-place change (UpdateInPlace only).
	Spec   *inplace.UpdateSpec
	Reason string
}

// LifecycleMove puts a pod in a lifecycle state: holding it for a hook, or releasing it.
type LifecycleMove = lifecycle.Move

// Compute plans one step of s at now. It never modifies s.
func Compute(s *Snapshot, now time.Time) Plan {
	p := newPlanner(s, now)
	p.resume()
	p.manage()
	p.update()
	p.release()
	return p.plan
}

// planner holds what every rule of one Compute reads.
type planner struct {
	s        *Snapshot
	now      time.Time
	minReady time.Duration
	// desired is the number of nodes that should run a daemon pod.
	desired int
	// acted are the pods this plan deletes, updates or holds; created the nodes it creates on.
	acted   map[string]bool
	created map[string]bool
	// rolling are the nodes the rolling update may move (nil when it moves none: OnDelete, paused).
	rolling map[string]bool
	plan    Plan
}

func newPlanner(s *Snapshot, now time.Time) *planner {
	p := &planner{s: s, now: now, minReady: time.Duration(s.Spec.MinReadySeconds) * time.Second,
		acted: map[string]bool{}, created: map[string]bool{}}
	for i := range s.Nodes {
		if s.Nodes[i].Verdict.Run {
			p.desired++
		}
	}
	return p
}

func (p *planner) note(format string, args ...any) {
	p.plan.Notes = append(p.plan.Notes, fmt.Sprintf(format, args...))
}

func (p *planner) wake(at time.Time) {
	if !at.IsZero() && at.After(p.now) && (p.plan.Next.IsZero() || at.Before(p.plan.Next)) {
		p.plan.Next = at
	}
}

// available is the pod's availability, and schedules the plan for when a ready pod becomes
// available.
func (p *planner) available(pod *PodFacts) bool {
	if pod.Available(p.now, p.minReady) {
		return true
	}
	if at, ok := pod.AvailableAt(p.minReady); ok && pod.Phase != "" {
		p.wake(at)
	}
	return false
}

// resume applies the deferred in-place updates whose grace period is over.
func (p *planner) resume() {
	for _, n := range p.s.Nodes {
		for i := range n.Pods {
			pod := &n.Pods[i]
			if pod.GraceDue.IsZero() || pod.Terminating {
				continue
			}
			if pod.GraceDue.After(p.now) {
				p.wake(pod.GraceDue)
				continue
			}
			p.plan.Resumes = append(p.plan.Resumes, pod.Name)
		}
	}
}

// delete plans pod's deletion (or holds it for the preDelete hook).
func (p *planner) delete(pod *PodFacts, node, reason string, failed bool) {
	if p.acted[pod.Name] {
		return
	}
	if p.holdForDelete(pod, reason) {
		return
	}
	p.acted[pod.Name] = true
	p.plan.Deletes = append(p.plan.Deletes, Deletion{Pod: pod.Name, Node: node, Reason: reason, Failed: failed})
}

// surging reports whether the rolling update surges (maxSurge > 0): a node may then run an old and
// an updated pod at once.
func (p *planner) surging() bool {
	us := p.s.Spec.UpdateStrategy
	return us.Type == v1beta1.DaemonSetRollingUpdateStrategyType && us.RollingUpdate != nil &&
		scaled(us.RollingUpdate.MaxSurge, p.desired, 0) > 0
}

// scaled is an int-or-percent of total, percentages rounded up; def when v is nil or invalid.
func scaled(v *intstr.IntOrString, total, def int) int {
	if v == nil {
		return def
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, true)
	if err != nil {
		return def
	}
	return max(n, 0)
}

// partition is how many daemon pods the rolling update keeps old, of total.
func (p *planner) partition(total int) int {
	ru := p.s.Spec.UpdateStrategy.RollingUpdate
	if ru == nil {
		return 0
	}
	return updateorder.Partition(ru.Partition, total)
}
