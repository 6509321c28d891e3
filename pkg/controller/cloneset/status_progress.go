package cloneset

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Reasons of the Progressing condition (spec.progressDeadlineSeconds). The strings are OpenKruise
// v1.9's (the values of its CloneSetProgressUpdated, CloneSetAvailable, CloneSetProgressPaused,
// CloneSetProgressPartitionAvailable and CloneSetProgressDeadlineExceeded constants), which tools
// built for OpenKruise compare against; the Go names of those constants are not the strings.
const (
	// ReasonProgressUpdated: the rollout is under way (condition True).
	ReasonProgressUpdated = "CloneSetUpdated"
	// ReasonProgressAvailable: every replica is at the update revision and available.
	ReasonProgressAvailable = "CloneSetAvailable"
	// ReasonProgressPaused: updateStrategy.paused.
	ReasonProgressPaused = "CloneSetPaused"
	// ReasonProgressPartitionAvailable: a partition holds pods back and every pod it lets update
	// is updated and available.
	ReasonProgressPartitionAvailable = "ProgressPartitionAvailable"
	// ReasonProgressDeadlineExceeded: the rollout did not finish within the deadline (condition False).
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
)

// Messages of the Progressing condition, OpenKruise v1.9's.
const (
	msgProgressUpdated            = "CloneSet is progressing"
	msgProgressAvailable          = "CloneSet is available"
	msgProgressPaused             = "CloneSet is paused"
	msgProgressPartitionAvailable = "CloneSet has been paused due to partition ready"
	msgProgressDeadlineExceeded   = "CloneSet revision %s has timed out progressing" // the update revision
)

// progressCondition is the Progressing condition of a CloneSet whose new status is st (counters
// and revisions computed), given the stored status old; nil removes it (no progressDeadlineSeconds,
// or math.MaxInt32, which means none). It follows OpenKruise v1.9, state for state and time for
// time, including where that differs from Deployment's progress deadline.
//
// The state is the first that holds of:
//  1. Available: the current revision is the update revision and replicas, updated replicas and
//     updated available replicas all equal spec.replicas (whether or not paused);
//  2. Paused: updateStrategy.paused;
//  3. PartitionAvailable: expectedUpdatedReplicas < spec.replicas (a partition holds pods back)
//     and every expected pod is updated and available;
//  4. DeadlineExceeded (False): the stored condition says so already, or it is Updated and its
//     lastUpdateTime plus progressDeadlineSeconds is before now;
//  5. Updated: the rollout is under way.
//
// The stored condition is kept as it is, message and times included, when the state has its status
// and reason; otherwise the new one has lastUpdateTime now and keeps the stored lastTransitionTime
// if the status is the same. So the deadline runs from the moment the condition turned Updated:
// pods becoming updated, ready or available do not move it, nor does a new update revision, and a
// rollout slower than the deadline in total is exceeded however steady its steps. Exceeded stays
// (with the revision it named) until the CloneSet is available, paused or partition-available; it
// only reports, the rollout goes on.
//
// One difference, deliberate (docs/openkruise.md): OpenKruise also times out an Available, Paused
// or PartitionAvailable condition older than the deadline, so that leaving one of those states (a
// new revision, a lost pod, a resume) is exceeded at once; here leaving one starts the deadline
// (Updated, lastUpdateTime now), as OpenKruise documents it (paused time does not count).
func progressCondition(spec *v1alpha1.CloneSetSpec, st, old *v1alpha1.CloneSetStatus, now time.Time) *v1alpha1.CloneSetCondition {
	pds := spec.ProgressDeadlineSeconds
	if pds == nil || *pds == math.MaxInt32 {
		return nil
	}
	var stored *v1alpha1.CloneSetCondition
	if i := conditionIndex(old.Conditions, v1alpha1.CloneSetConditionProgressing); i >= 0 {
		c := old.Conditions[i]
		stored = &c
	}
	replicas := ptr.Deref(spec.Replicas, 1)
	status, reason, msg := corev1.ConditionTrue, ReasonProgressUpdated, msgProgressUpdated
	switch {
	case st.CurrentRevision == st.UpdateRevision && st.Replicas == replicas && st.UpdatedReplicas == replicas &&
		st.UpdatedAvailableReplicas == replicas:
		reason, msg = ReasonProgressAvailable, msgProgressAvailable
	case spec.UpdateStrategy.Paused:
		reason, msg = ReasonProgressPaused, msgProgressPaused
	case st.ExpectedUpdatedReplicas < replicas && st.ExpectedUpdatedReplicas <= st.UpdatedAvailableReplicas:
		reason, msg = ReasonProgressPartitionAvailable, msgProgressPartitionAvailable
	case stored != nil && (stored.Reason == ReasonProgressDeadlineExceeded ||
		(stored.Reason == ReasonProgressUpdated && stored.LastUpdateTime.Add(time.Duration(*pds)*time.Second).Before(now))):
		status, reason, msg = corev1.ConditionFalse, ReasonProgressDeadlineExceeded,
			fmt.Sprintf(msgProgressDeadlineExceeded, st.UpdateRevision)
	}
	if stored != nil && stored.Status == status && stored.Reason == reason {
		return stored
	}
	c := &v1alpha1.CloneSetCondition{Type: v1alpha1.CloneSetConditionProgressing, Status: status, Reason: reason,
		Message: msg, LastTransitionTime: metav1.NewTime(now), LastUpdateTime: metav1.NewTime(now)}
	if stored != nil && stored.Status == status {
		c.LastTransitionTime = stored.LastTransitionTime
	}
	return c
}

// ProgressDeadline is the instant after which the Progressing condition of status turns False if
// the rollout has not become available, paused or partition-available by then (the first reconcile
// strictly later reports it); zero when it cannot (no deadline, or not Updated).
func ProgressDeadline(spec *v1alpha1.CloneSetSpec, status *v1alpha1.CloneSetStatus) time.Time {
	pds := spec.ProgressDeadlineSeconds
	i := conditionIndex(status.Conditions, v1alpha1.CloneSetConditionProgressing)
	if pds == nil || *pds == math.MaxInt32 || i < 0 || status.Conditions[i].Reason != ReasonProgressUpdated {
		return time.Time{}
	}
	return status.Conditions[i].LastUpdateTime.Add(time.Duration(*pds) * time.Second)
}

// setProgressCondition puts c in place of conds' Progressing condition: an unchanged condition
// keeps its place, a changed one moves to the end of the list (as OpenKruise writes it), nil
// removes it.
func setProgressCondition(conds []v1alpha1.CloneSetCondition, c *v1alpha1.CloneSetCondition) []v1alpha1.CloneSetCondition {
	i := conditionIndex(conds, v1alpha1.CloneSetConditionProgressing)
	if i >= 0 && c != nil && conds[i] == *c {
		return conds
	}
	if i >= 0 {
		conds = append(conds[:i:i], conds[i+1:]...)
	}
	if c == nil {
		return conds
	}
	return append(conds, *c)
}

// reportProgress records a Warning event when the rollout's Progressing condition turns to
// ProgressDeadlineExceeded, so that a stuck rollout is visible in `kubectl describe`.
func (r *Reconciler) reportProgress(cs *v1alpha1.CloneSet, next *v1alpha1.CloneSetStatus) {
	if progressReason(next.Conditions) == ReasonProgressDeadlineExceeded && progressReason(cs.Status.Conditions) != ReasonProgressDeadlineExceeded {
		r.event(cs, corev1.EventTypeWarning, ReasonProgressDeadlineExceeded,
			"revision %s not rolled out within %ds: %d of %d pods updated, %d updated and ready",
			next.UpdateRevision, *cs.Spec.ProgressDeadlineSeconds, next.UpdatedReplicas, next.Replicas, next.UpdatedReadyReplicas)
	}
}

// progressReason is the reason of the Progressing condition ("" without one).
func progressReason(conds []v1alpha1.CloneSetCondition) string {
	if i := conditionIndex(conds, v1alpha1.CloneSetConditionProgressing); i >= 0 {
		return conds[i].Reason
	}
	return ""
}
