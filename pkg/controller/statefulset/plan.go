package statefulset

import (
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// Plan is what one reconcile does, with a reason for every action.
type Plan struct {
	// Creates are the pods to create, by ascending ordinal.
	Creates []Creation
	// Deletes are pods to delete: condemned by a scale-in, or finished (Failed, Succeeded) and
	// replaced by a later plan.
	Deletes []Deletion
	// Updates are pods to move to the update revision, in place or by recreate.
	Updates []Update
	// Expands are pods whose claims are expanded to their templates' size
	// (volumeClaimUpdateStrategy OnPodRollingUpdate); the pods keep running.
	Expands []string
	// Resumes are pods whose deferred in-place update's grace period is over.
	Resumes []string
	// Lifecycle are the lifecycle state changes (pkg/core/lifecycle).
	Lifecycle []LifecycleMove
	// Refusals are pods InPlaceOnly leaves on their revision: the change cannot be made in place.
	Refusals []Refusal
	// Notes say what the plan waits for.
	Notes []string
	// Next is when the plan may change without any event (a pod becoming available after
	// minReadySeconds, a grace period ending); zero for never.
	Next time.Time
}

// Creation is a pod to create.
type Creation struct {
	Ordinal  int
	Revision string
	Reason   string
}

// Deletion is a pod to delete.
type Deletion struct{ Pod, Reason string }

// UpdateMode is how a pod moves to the update revision.
type UpdateMode int

const (
	// UpdateInPlace changes the pod through the in-place engine.
	UpdateInPlace UpdateMode = iota
	// UpdateRecreate deletes the pod; a later plan creates it again at the update revision.
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

// Refusal is a pod InPlaceOnly cannot update.
type Refusal = podcontrol.Refusal

// Compute plans one step of s at now. It never modifies s.
func Compute(s *Snapshot, now time.Time) Plan {
	p := newPlanner(s, now)
	p.resume()
	blocked, updatable := p.scale()
	if !blocked {
		p.condemn()
	}
	if !blocked || !p.monotonic || updatable {
		p.update()
	}
	p.release()
	return p.plan
}

// planner holds what every rule of one Compute reads.
type planner struct {
	s        *Snapshot
	now      time.Time
	minReady time.Duration
	// replicas are the replicas' ordinals (walked, never listed: there may be 100,000); missing is
	// how many of them have no pod, lastPod the highest ordinal with one (-1: none).
	replicas         ordinal.Replicas
	missing, lastPod int
	byOrd            map[int]*PodFacts
	monotonic        bool
	// acted are the pods this plan creates, deletes, updates or holds.
	acted map[string]bool
	plan  Plan
}

func newPlanner(s *Snapshot, now time.Time) *planner {
	p := &planner{s: s, now: now, byOrd: map[int]*PodFacts{}, acted: map[string]bool{}}
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MinReadySeconds != nil {
		p.minReady = time.Duration(*ru.MinReadySeconds) * time.Second
	}
	p.replicas = ordinal.NewReplicas(startOf(&s.Spec), ptr.Deref(s.Spec.Replicas, 1), s.Reserved)
	p.missing, p.lastPod = p.replicas.Len(), -1
	for i := range s.Pods {
		p.byOrd[s.Pods[i].Ordinal] = &s.Pods[i]
		p.lastPod = max(p.lastPod, s.Pods[i].Ordinal)
		if p.replicas.Contains(s.Pods[i].Ordinal) {
			p.missing--
		}
	}
	p.monotonic = s.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
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

// healthy is the pod's health, and schedules the plan for when a ready pod becomes available.
func (p *planner) healthy(pod *PodFacts) bool {
	if pod.healthy(p.now, p.minReady) {
		return true
	}
	if at, ok := pod.AvailableAt(p.minReady); ok && pod.running() {
		p.wake(at)
	}
	return false
}

// resume applies the deferred in-place updates whose grace period is over.
func (p *planner) resume() {
	for i := range p.s.Pods {
		pod := &p.s.Pods[i]
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

// scale creates the missing replicas and replaces finished ones, by ascending ordinal. With
// OrderedReady it acts on one pod at a time and stops at the first pod that is not healthy,
// reporting blocked -- and updatable when that pod waits for the rolling update itself (an old pod
// above the partition, not ready: the broken-pod trap, kubernetes#67250, which updating it
// fixes); with Parallel it acts on all, within scaleStrategy.maxUnavailable and at most
// podcontrol.MaxCreatesPerReconcile creations.
func (p *planner) scale() (blocked, updatable bool) {
	budget := p.scaleBudget()
	currentKept, firstWaiting := 0, -1
	for ord := range p.replicas.All() {
		pod := p.byOrd[ord]
		switch {
		case pod == nil:
			if budget == 0 || len(p.plan.Creates) == podcontrol.MaxCreatesPerReconcile {
				if firstWaiting < 0 {
					firstWaiting = ord
				}
				if ord > p.lastPod {
					p.noteWaiting(budget, firstWaiting)
					return false, false // only missing pods beyond: they wait
				}
				continue
			}
			budget--
			rev := p.revisionForNew(ord, &currentKept)
			p.plan.Creates = append(p.plan.Creates, Creation{Ordinal: ord, Revision: rev,
				Reason: fmt.Sprintf("ordinal %d of %d replicas is missing", ord, p.replicas.Len())})
			if p.monotonic {
				p.note("OrderedReady: waiting for %s to be created and become available", ordinal.PodName(p.s.Name, ord))
				return true, false
			}
		case pod.finished():
			p.acted[pod.Name] = true
			p.plan.Deletes = append(p.plan.Deletes, Deletion{Pod: pod.Name, Reason: fmt.Sprintf("the pod is %s: it is replaced", pod.Phase)})
			if p.monotonic {
				return true, false
			}
		case pod.Terminating:
			if p.monotonic {
				p.note("OrderedReady: waiting for %s to terminate", pod.Name)
				return true, false
			}
		case pod.SpecifiedDelete:
			reason := "labelled " + v1alpha1.SpecifiedDeleteKey + ": it is created again"
			if !p.holdForDelete(pod, reason) {
				p.acted[pod.Name] = true
				p.plan.Deletes = append(p.plan.Deletes, Deletion{Pod: pod.Name, Reason: reason})
			}
			if p.monotonic {
				return true, false
			}
		case !p.healthy(pod):
			if p.monotonic {
				if p.rolling(pod) {
					return true, true
				}
				p.note("OrderedReady: waiting for %s to become available", pod.Name)
				return true, false
			}
		}
		if pod != nil && pod.Revision != p.s.UpdateRevision {
			currentKept++
		}
	}
	if firstWaiting >= 0 {
		p.noteWaiting(budget, firstWaiting)
	}
	return false, false
}

// noteWaiting says how many missing replicas Parallel leaves for later, from the ordinal first on,
// and why: scaleStrategy.maxUnavailable (budget 0) or the bound on creations per reconcile.
func (p *planner) noteWaiting(budget, first int) {
	waiting := p.missing - len(p.plan.Creates)
	if budget == 0 {
		p.note("scaleStrategy.maxUnavailable: %d missing pods wait to be created, from %s", waiting, ordinal.PodName(p.s.Name, first))
		return
	}
	p.note("at most %d pods are created per reconcile: %d more wait, from %s", podcontrol.MaxCreatesPerReconcile, waiting, ordinal.PodName(p.s.Name, first))
}

// rolling reports whether the rolling update is to move pod (old, above an ordered partition,
// not paused).
func (p *planner) rolling(pod *PodFacts) bool {
	us := p.s.Spec.UpdateStrategy
	ru := us.RollingUpdate
	if us.Type == appsv1.OnDeleteStatefulSetStrategyType || ru == nil || ru.Paused || pod.Revision == p.s.UpdateRevision {
		return false
	}
	pos, _ := p.replicas.Position(pod.Ordinal)
	return p.unordered() || pos >= int(ptr.Deref(ru.Partition, 0))
}

// scaleBudget is how many pods Parallel may create now under scaleStrategy.maxUnavailable (-1:
// no bound): the bound less the replicas already there and not healthy.
func (p *planner) scaleBudget() int {
	ss := p.s.Spec.ScaleStrategy
	if p.monotonic || ss == nil || ss.MaxUnavailable == nil {
		return -1
	}
	bound := scaledValue(ss.MaxUnavailable, p.replicas.Len())
	for i := range p.s.Pods {
		if pod := &p.s.Pods[i]; p.replicas.Contains(pod.Ordinal) && !pod.finished() && !pod.healthy(p.now, p.minReady) {
			bound--
		}
	}
	return max(bound, 0)
}

// revisionForNew is the revision a new pod of ordinal ord gets: the current revision below the
// partition of a rolling update, else the update revision. Unordered (Parallel with
// unorderedUpdate), the partition counts pods: new pods keep the current revision while fewer
// than partition pods do.
func (p *planner) revisionForNew(ord int, currentKept *int) string {
	ru := p.s.Spec.UpdateStrategy.RollingUpdate
	if p.s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType || ru == nil {
		return p.s.UpdateRevision
	}
	partition := int(ptr.Deref(ru.Partition, 0))
	if p.unordered() {
		if *currentKept < partition {
			*currentKept++
			return p.s.CurrentRevision
		}
		return p.s.UpdateRevision
	}
	if pos, _ := p.replicas.Position(ord); pos < partition {
		return p.s.CurrentRevision
	}
	return p.s.UpdateRevision
}

// unordered reports whether updates follow unorderedUpdate (Parallel only).
func (p *planner) unordered() bool {
	ru := p.s.Spec.UpdateStrategy.RollingUpdate
	return !p.monotonic && ru != nil && ru.UnorderedUpdate != nil
}

// condemn deletes the pods whose ordinals are no longer replicas (scale-in, reserveOrdinals), by
// descending ordinal: with OrderedReady one at a time, once the previous one is gone.
func (p *planner) condemn() {
	var condemned []*PodFacts
	for i := range p.s.Pods {
		if !p.replicas.Contains(p.s.Pods[i].Ordinal) {
			condemned = append(condemned, &p.s.Pods[i])
		}
	}
	slices.Reverse(condemned) // Pods are by ascending ordinal
	for _, pod := range condemned {
		if pod.Terminating {
			if p.monotonic {
				p.note("OrderedReady: waiting for %s to terminate", pod.Name)
				return
			}
			continue
		}
		reason := condemnReason(pod.Ordinal, p.s.Reserved)
		if !p.holdForDelete(pod, reason) {
			p.acted[pod.Name] = true
			p.plan.Deletes = append(p.plan.Deletes, Deletion{Pod: pod.Name, Reason: reason})
		}
		if p.monotonic {
			return
		}
	}
}

func condemnReason(ord int, reserved ordinal.Reserved) string {
	if reserved.Contains(ord) {
		return fmt.Sprintf("ordinal %d is reserved (reserveOrdinals)", ord)
	}
	return fmt.Sprintf("ordinal %d is beyond the replicas", ord)
}

// scaledValue is an int-or-percent of total, percentages rounded down, at least 1.
func scaledValue(v *intstr.IntOrString, total int) int {
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, false)
	if err != nil || n < 1 {
		return 1
	}
	return n
}
