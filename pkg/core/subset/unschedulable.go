package subset

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// WorkloadSpreadUnschedulableDuration is how long a WorkloadSpread subset stays unschedulable
// once marked; OpenKruise fixes it at 5 minutes.
const WorkloadSpreadUnschedulableDuration = 300 * time.Second

// Window holds the two durations of the Adaptive strategy.
type Window struct {
	// RescheduleCritical is how long after its creation a pod that failed to schedule counts as
	// stuck (rescheduleCriticalSeconds).
	RescheduleCritical time.Duration
	// Unschedulable is how long a subset stays unschedulable after it was marked so
	// (unschedulableDuration; WorkloadSpreadUnschedulableDuration for WorkloadSpread).
	Unschedulable time.Duration
}

// PodStuck tells whether pod is stuck: Pending, not bound, not deleting, with PodScheduled=False
// and reason Unschedulable, and created more than critical before now. A pod that failed to
// schedule but is not stuck yet gets the time it becomes stuck (zero otherwise); as OpenKruise,
// the clock starts at the pod's creation, not at the condition's transition.
func PodStuck(pod *corev1.Pod, critical time.Duration, now time.Time) (stuck bool, stuckAt time.Time) {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" {
		return false, time.Time{}
	}
	if !failedToSchedule(pod) {
		return false, time.Time{}
	}
	deadline := pod.CreationTimestamp.Add(critical)
	if deadline.Before(now) {
		return true, time.Time{}
	}
	return false, deadline
}

func failedToSchedule(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// Verdict is the schedulability of one subset at a given time.
type Verdict struct {
	// Stuck are the subset's stuck pods, in input order.
	Stuck []*corev1.Pod
	// Unschedulable is true while the subset must not receive new replicas.
	Unschedulable bool
	// MarkedSince is when the subset's unschedulable mark (its Schedulable=False condition) was
	// set; zero when the subset is schedulable. Callers store it as the condition's
	// lastTransitionTime.
	MarkedSince time.Time
	// Until is when the mark expires (MarkedSince + Window.Unschedulable); zero when schedulable.
	Until time.Time
	// RecheckAt is the earliest future time the verdict may change without any event: a pod
	// becoming stuck or the mark expiring. Zero when nothing is pending.
	RecheckAt time.Time
}

// Assess decides whether a subset is unschedulable at now. markedSince is when the subset was
// last marked unschedulable (nil when its Schedulable condition is not False). A mark younger
// than w.Unschedulable holds; an older one expires; a stuck pod (re)marks the subset, keeping an
// unexpired mark's time and starting a new one at now otherwise.
func Assess(pods []*corev1.Pod, markedSince *time.Time, now time.Time, w Window) Verdict {
	var v Verdict
	if markedSince != nil && now.Before(markedSince.Add(w.Unschedulable)) {
		v.Unschedulable, v.MarkedSince = true, *markedSince
	}
	for _, pod := range pods {
		stuck, at := PodStuck(pod, w.RescheduleCritical, now)
		if stuck {
			v.Stuck = append(v.Stuck, pod)
		}
		v.RecheckAt = Earliest(v.RecheckAt, at)
	}
	if len(v.Stuck) > 0 && !v.Unschedulable {
		v.Unschedulable, v.MarkedSince = true, now
	}
	if v.Unschedulable {
		v.Until = v.MarkedSince.Add(w.Unschedulable)
		v.RecheckAt = Earliest(v.RecheckAt, v.Until)
	}
	return v
}

// Earliest returns the earlier of two times, a zero time counting as absent (recheck times of
// verdicts and reservations combine with it).
func Earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	default:
		return b
	}
}
