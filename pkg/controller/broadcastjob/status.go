package broadcastjob

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Event reasons, OpenKruise's.
const (
	ReasonJobComplete       = "JobComplete"
	ReasonDeadlineExceeded  = "DeadlineExceeded"
	ReasonFailedPodFound    = "failed pod is found" // sic: OpenKruise's reason, spaces included
	ReasonPaused            = "Paused"
	ReasonContinue          = "Continue"
	ReasonTooManyActivePods = "TooManyActivePods"
	ReasonDuplicatePod      = "DuplicatePodCreatedOnSameNode"
	ReasonSuccessfulCreate  = "SuccessfulCreate"
	ReasonFailedCreate      = "FailedCreate"
	ReasonSuccessfulDelete  = "SuccessfulDelete"
	ReasonFailedDelete      = "FailedDelete"
	// ReasonInvalidSpec is ours: a spec the validating webhook refuses, seen anyway.
	ReasonInvalidSpec = "InvalidSpec"
)

// Finished reports whether job has ended for good: a Failed condition that is True, or a
// Complete one under completionPolicy Always. (OpenKruise's IsJobFinished ignores the conditions
// of a Never job, but keeps a Never job that FailFast failed in phase failed for good: the same.)
func Finished(job *v1beta1.BroadcastJob) bool {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		if c.Type == v1beta1.BroadcastJobFailed || (c.Type == v1beta1.BroadcastJobComplete && alwaysCompletes(job)) {
			return true
		}
	}
	return false
}

// alwaysCompletes reports whether the job's completion policy is Always (the default).
func alwaysCompletes(job *v1beta1.BroadcastJob) bool {
	return job.Spec.CompletionPolicy.Type != v1beta1.BroadcastJobCompletionPolicyNever
}

// finish ends st: phase, the condition typ (True, reason typ), completionTime now.
func finish(st *v1beta1.BroadcastJobStatus, typ v1beta1.BroadcastJobConditionType, message string, now metav1.Time) {
	st.Conditions = append(st.Conditions, v1beta1.BroadcastJobCondition{Type: typ, Status: corev1.ConditionTrue,
		LastProbeTime: now, LastTransitionTime: now, Reason: string(typ), Message: message})
	st.CompletionTime = &now
	if typ == v1beta1.BroadcastJobComplete {
		st.Phase = v1beta1.BroadcastJobPhaseCompleted
	} else {
		st.Phase = v1beta1.BroadcastJobPhaseFailed
	}
}

// Messages of the conditions and events, OpenKruise's words.
func completedMessage(succeeded, failed int32) string {
	return fmt.Sprintf("Job completed, %d pods succeeded, %d pods failed", succeeded, failed)
}

func completedEvent(job *v1beta1.BroadcastJob, succeeded, failed int32) string {
	return fmt.Sprintf("Job %s/%s is completed, %d pods succeeded, %d pods failed", job.Namespace, job.Name, succeeded, failed)
}

func deadlineMessage(job *v1beta1.BroadcastJob) string {
	return fmt.Sprintf("Job %s/%s was active longer than specified deadline", job.Namespace, job.Name)
}

const failFastMessage = "failure policy is FailurePolicyTypeFailFast and failed pod is found"

// deadline is when an Always job with activeDeadlineSeconds fails (zero: never).
func deadline(job *v1beta1.BroadcastJob, start time.Time) time.Time {
	ads := job.Spec.CompletionPolicy.ActiveDeadlineSeconds
	if !alwaysCompletes(job) || ads == nil {
		return time.Time{}
	}
	return start.Add(time.Duration(*ads) * time.Second)
}

// expiry is when a finished Always job with ttlSecondsAfterFinished is deleted (zero: never).
func expiry(job *v1beta1.BroadcastJob) time.Time {
	ttl, done := job.Spec.CompletionPolicy.TTLSecondsAfterFinished, job.Status.CompletionTime
	if ttl == nil || done == nil || !alwaysCompletes(job) {
		return time.Time{}
	}
	return done.Add(time.Duration(*ttl) * time.Second)
}
