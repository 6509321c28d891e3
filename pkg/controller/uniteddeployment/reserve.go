package uniteddeployment

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/pkg/core/subset"
)

// ReservedLabel marks, under the Adaptive strategy with reserveUnschedulablePods, whether a pod is
// reserved ("true": it cannot be scheduled, it stays in its subset and a stand-in runs in a later
// subset) or not ("false"). The UnitedDeployment's status.labelSelector selects "false" only, so
// an HPA counts no reserved pod.
const ReservedLabel = "apps.kruise.io/united-deployment-reserved-pod"

// LabelPatch is one pod whose ReservedLabel must be set to Value.
type LabelPatch struct {
	Pod   *corev1.Pod
	Value string
}

// reservation is one subset's reserved pods at a given time.
type reservation struct {
	// Reserved counts the subset's reserved pods; Healthy its healthy pods that are not reserved.
	Reserved, Healthy int32
	// Patches are the label writes that record the decisions.
	Patches []LabelPatch
	// RecheckAt is when a decision may change without any event (zero: never).
	RecheckAt time.Time
}

// reserve decides which of a subset's pods are reserved at now (OpenKruise's rules):
//   - a reserved pod stays reserved until it runs at the update revision and has been ready for
//     w.Unschedulable;
//   - a pod never decided that appears in a subset marked unschedulable (marked) is reserved: it
//     was created as a stand-in target while the subset could not schedule;
//   - any other pod is reserved once it is stuck (subset.PodStuck): a pod of the update revision
//     from its creation, a pod of an older revision also no earlier than w.RescheduleCritical after
//     the update began (updateSince), so a pod left pending by the previous rollout is judged by
//     this one's clock.
func reserve(pods []*corev1.Pod, marked bool, updateRevision string, updateSince time.Time, w subset.Window, now time.Time) reservation {
	var r reservation
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		label, decided := pod.Labels[ReservedLabel]
		var reserved bool
		var at time.Time
		switch {
		case label == "true":
			reserved, at = stillReserved(pod, updateRevision, w.Unschedulable, now)
		case !decided && marked:
			reserved = true
		default:
			stuck, stuckAt := subset.PodStuck(pod, w.RescheduleCritical, now)
			if pod.Labels[RevisionLabel] != updateRevision {
				if due := updateSince.Add(w.RescheduleCritical); stuck && now.Before(due) {
					stuck, stuckAt = false, due
				}
			}
			reserved, at = stuck, stuckAt
		}
		r.RecheckAt = subset.Earliest(r.RecheckAt, at)
		if reserved {
			r.Reserved++
		} else if healthy(pod) {
			r.Healthy++
		}
		if value := boolLabel(reserved); !decided || label != value {
			r.Patches = append(r.Patches, LabelPatch{Pod: pod, Value: value})
		}
	}
	return r
}

// stillReserved tells whether a reserved pod stays reserved, and when that may change.
func stillReserved(pod *corev1.Pod, updateRevision string, hold time.Duration, now time.Time) (bool, time.Time) {
	if pod.Status.Phase != corev1.PodRunning || pod.Labels[RevisionLabel] != updateRevision {
		return true, time.Time{}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			if end := c.LastTransitionTime.Add(hold); now.Before(end) {
				return true, end
			}
			return false, time.Time{}
		}
	}
	return true, time.Time{}
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
