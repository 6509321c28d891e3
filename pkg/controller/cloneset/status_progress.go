package cloneset

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Reasons of the Progressing condition (spec.progressDeadlineSeconds), OpenKruise v1.9's.
const (
	// ReasonProgressUpdated: the rollout is under way and made progress within the deadline.
	ReasonProgressUpdated = "CloneSetUpdated"
	// ReasonProgressAvailable: every replica is at the update revision and available.
	ReasonProgressAvailable = "CloneSetAvailable"
	// ReasonProgressPaused: updateStrategy.paused; the deadline does not run.
	ReasonProgressPaused = "CloneSetProgressPaused"
	// ReasonProgressPartitionAvailable: every pod the partition lets update is updated and available.
	ReasonProgressPartitionAvailable = "CloneSetProgressPartitionAvailable"
	// ReasonProgressDeadlineExceeded: no progress for progressDeadlineSeconds (condition False).
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
)

// progressCondition is the Progressing condition of a CloneSet whose new status is st (counters
// and revisions computed), given the stored status old; nil removes it (no progressDeadlineSeconds,
// or math.MaxInt32, which means none).
//
// The rollout is complete (Available), paused (Paused: the deadline does not run, and resuming
// starts it afresh) or stopped at its partition (PartitionAvailable); otherwise it progresses.
// Progress is a new update revision, coming from one of those three states, or more pods updated,
// updated and ready, or updated and available than the stored status says; each moves
// lastUpdateTime to now. Without progress for progressDeadlineSeconds after lastUpdateTime the
// condition turns False with reason ProgressDeadlineExceeded, and stays so until progress. The
// rollout itself goes on either way: the condition reports, it does not stop anything.
func progressCondition(spec *v1alpha1.CloneSetSpec, st, old *v1alpha1.CloneSetStatus, now time.Time) *v1alpha1.CloneSetCondition {
	pds := spec.ProgressDeadlineSeconds
	if pds == nil || *pds == math.MaxInt32 {
		return nil
	}
	var cur *v1alpha1.CloneSetCondition
	if i := conditionIndex(old.Conditions, v1alpha1.CloneSetConditionProgressing); i >= 0 {
		c := old.Conditions[i]
		cur = &c
	}
	replicas := int32(1)
	if spec.Replicas != nil {
		replicas = *spec.Replicas
	}
	next := func(status corev1.ConditionStatus, reason, msg string) *v1alpha1.CloneSetCondition {
		c := &v1alpha1.CloneSetCondition{Type: v1alpha1.CloneSetConditionProgressing, Status: status, Reason: reason,
			Message: msg, LastTransitionTime: metav1.NewTime(now), LastUpdateTime: metav1.NewTime(now)}
		if cur != nil && cur.Status == status {
			c.LastTransitionTime = cur.LastTransitionTime
			if cur.Reason == reason && cur.Message == msg {
				c.LastUpdateTime = cur.LastUpdateTime
			}
		}
		return c
	}
	switch {
	case st.CurrentRevision == st.UpdateRevision && st.Replicas == replicas && st.UpdatedReplicas == replicas &&
		st.UpdatedAvailableReplicas == replicas:
		return next(corev1.ConditionTrue, ReasonProgressAvailable, "CloneSet is available")
	case spec.UpdateStrategy.Paused:
		return next(corev1.ConditionTrue, ReasonProgressPaused, "CloneSet is paused")
	case st.ExpectedUpdatedReplicas <= st.UpdatedAvailableReplicas:
		return next(corev1.ConditionTrue, ReasonProgressPartitionAvailable, "CloneSet has been paused due to partition ready")
	}
	progressed := cur == nil || (cur.Reason != ReasonProgressUpdated && cur.Reason != ReasonProgressDeadlineExceeded) ||
		st.UpdateRevision != old.UpdateRevision || st.UpdatedReplicas > old.UpdatedReplicas ||
		st.UpdatedReadyReplicas > old.UpdatedReadyReplicas || st.UpdatedAvailableReplicas > old.UpdatedAvailableReplicas
	if progressed {
		msg := "CloneSet is progressing"
		if cur != nil && cur.Reason == ReasonProgressPaused {
			msg = "CloneSet is resumed"
		}
		c := next(corev1.ConditionTrue, ReasonProgressUpdated, msg)
		c.LastUpdateTime = metav1.NewTime(now)
		return c
	}
	if cur.Reason == ReasonProgressUpdated && !now.Before(cur.LastUpdateTime.Add(time.Duration(*pds)*time.Second)) {
		return next(corev1.ConditionFalse, ReasonProgressDeadlineExceeded,
			fmt.Sprintf("CloneSet revision %s has timed out progressing", st.UpdateRevision))
	}
	return cur
}

// ProgressDeadline is when the Progressing condition of status turns False if nothing progresses
// first; zero when it cannot (no deadline, or not progressing).
func ProgressDeadline(spec *v1alpha1.CloneSetSpec, status *v1alpha1.CloneSetStatus) time.Time {
	pds := spec.ProgressDeadlineSeconds
	i := conditionIndex(status.Conditions, v1alpha1.CloneSetConditionProgressing)
	if pds == nil || *pds == math.MaxInt32 || i < 0 || status.Conditions[i].Reason != ReasonProgressUpdated {
		return time.Time{}
	}
	return status.Conditions[i].LastUpdateTime.Add(time.Duration(*pds) * time.Second)
}

// setProgressCondition puts c in place of conds' Progressing condition (removing it when c is nil).
func setProgressCondition(conds []v1alpha1.CloneSetCondition, c *v1alpha1.CloneSetCondition) []v1alpha1.CloneSetCondition {
	i := conditionIndex(conds, v1alpha1.CloneSetConditionProgressing)
	switch {
	case c == nil && i >= 0:
		return append(conds[:i:i], conds[i+1:]...)
	case c == nil:
		return conds
	case i >= 0:
		conds[i] = *c
		return conds
	default:
		return append(conds, *c)
	}
}

// reportProgress records a Warning event when the rollout's Progressing condition turns to
// ProgressDeadlineExceeded, so that a stuck rollout is visible in `kubectl describe`.
func (r *Reconciler) reportProgress(cs *v1alpha1.CloneSet, next *v1alpha1.CloneSetStatus) {
	reason := func(conds []v1alpha1.CloneSetCondition) string {
		if i := conditionIndex(conds, v1alpha1.CloneSetConditionProgressing); i >= 0 {
			return conds[i].Reason
		}
		return ""
	}
	if reason(next.Conditions) == ReasonProgressDeadlineExceeded && reason(cs.Status.Conditions) != ReasonProgressDeadlineExceeded {
		r.event(cs, corev1.EventTypeWarning, ReasonProgressDeadlineExceeded,
			"revision %s made no progress for %ds: %d of %d pods updated, %d updated and ready",
			next.UpdateRevision, *cs.Spec.ProgressDeadlineSeconds, next.UpdatedReplicas, next.Replicas, next.UpdatedReadyReplicas)
	}
}
