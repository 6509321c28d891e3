package ephemeraljob

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// PodState is how the job's containers stand in one target pod.
type PodState int

// A target is Waiting until its containers run (not yet injected included), Running while one
// runs, Succeeded once all exited 0, Failed once one exited non-zero or could not be run.
const (
	PodWaiting PodState = iota
	PodRunning
	PodSucceeded
	PodFailed
)

// Condition reasons, OpenKruise's (except ReasonMixed's message).
const (
	ReasonInitialized      = "Initialized"
	ReasonMatchEmpty       = "MatchEmpty"
	ReasonSucceeded        = "JobSucceeded"
	ReasonFailed           = "JobFailed"
	ReasonContainerFailed  = "CreateFailed" // OpenKruise's reason while some pod's container failed
	ReasonDeadlineExceeded = "DeadlineExceeded"
	ReasonError            = "Error"
)

// containerState classifies one ephemeral container's status as OpenKruise does: exit 0 with a
// finish time succeeded, a non-zero exit or the waiting reason RunContainerError failed.
func containerState(s *corev1.ContainerStatus) (PodState, bool) {
	switch {
	case s.State.Terminated != nil && s.State.Terminated.ExitCode != 0:
		return PodFailed, true
	case s.State.Terminated != nil && !s.State.Terminated.FinishedAt.IsZero():
		return PodSucceeded, true
	case s.State.Running != nil:
		return PodRunning, true
	case s.State.Waiting != nil && s.State.Waiting.Reason == "RunContainerError":
		return PodFailed, true
	case s.State.Waiting != nil:
		return PodWaiting, true
	}
	return PodWaiting, false
}

// StateOf is how the job's containers stand in pod, from its ephemeralContainerStatuses.
func StateOf(names sets.Set[string], pod *corev1.Pod) PodState {
	succeeded, running := 0, false
	for i := range pod.Status.EphemeralContainerStatuses {
		s := &pod.Status.EphemeralContainerStatuses[i]
		if !names.Has(s.Name) {
			continue
		}
		st, _ := containerState(s)
		switch st {
		case PodFailed:
			return PodFailed
		case PodSucceeded:
			succeeded++
		case PodRunning:
			running = true
		}
	}
	switch {
	case succeeded == names.Len() && succeeded > 0:
		return PodSucceeded
	case running:
		return PodRunning
	}
	return PodWaiting
}

// counts fills the status counters from the targets' states.
func counts(st *v1alpha1.EphemeralJobStatus, states []PodState) {
	st.Matches, st.Waiting, st.Running, st.Succeeded, st.Failed = int32(len(states)), 0, 0, 0, 0
	for _, s := range states {
		switch s {
		case PodWaiting:
			st.Waiting++
		case PodRunning:
			st.Running++
		case PodSucceeded:
			st.Succeeded++
		case PodFailed:
			st.Failed++
		}
	}
}

// setCondition sets the condition typ True (or status) with reason and message; its times move
// only when one of those changes, so that an unchanged status compares equal.
func setCondition(st *v1alpha1.EphemeralJobStatus, typ v1alpha1.EphemeralJobConditionType, status corev1.ConditionStatus,
	reason, message string, now metav1.Time) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != typ {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		if c.Status != status || c.Reason != reason || c.Message != message {
			c.Status, c.Reason, c.Message, c.LastProbeTime = status, reason, message, now
		}
		return
	}
	st.Conditions = append(st.Conditions, v1alpha1.EphemeralJobCondition{Type: typ, Status: status, Reason: reason,
		Message: message, LastProbeTime: now, LastTransitionTime: now})
}

// hasCondition reports whether the status holds the condition typ.
func hasCondition(st *v1alpha1.EphemeralJobStatus, typ v1alpha1.EphemeralJobConditionType) bool {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// finish ends the job: phase, completionTime, and the condition typ True.
func finish(st *v1alpha1.EphemeralJobStatus, phase v1alpha1.EphemeralJobPhase, typ v1alpha1.EphemeralJobConditionType,
	reason, message string, now metav1.Time) {
	st.Phase, st.CompletionTime = phase, &now
	setCondition(st, typ, corev1.ConditionTrue, reason, message, now)
}

// outcome decides phase and conditions from the counters (already set) of an unfinished job:
// Running while a target runs, Waiting while one waits, otherwise finished — Succeeded when none
// failed, Failed otherwise, mixed outcomes included (OpenKruise leaves those Unknown, issue
// kruise#2514). Paused overrides an unfinished phase; the deadline then fails a job not paused.
func outcome(job *v1alpha1.EphemeralJob, st *v1alpha1.EphemeralJobStatus, now metav1.Time) {
	if st.Matches == 0 {
		st.Phase = v1alpha1.EphemeralJobWaiting
		setCondition(st, v1alpha1.EphemeralJobMatchedEmpty, corev1.ConditionTrue, ReasonMatchEmpty, "job match no pods", now)
	} else if hasCondition(st, v1alpha1.EphemeralJobMatchedEmpty) {
		setCondition(st, v1alpha1.EphemeralJobMatchedEmpty, corev1.ConditionFalse, "Matched",
			fmt.Sprintf("job matches %d pods", st.Matches), now)
	}
	switch {
	case st.Matches == 0:
	case st.Running > 0:
		st.Phase = v1alpha1.EphemeralJobRunning
	case st.Waiting > 0:
		st.Phase = v1alpha1.EphemeralJobWaiting
	case st.Failed == 0:
		finish(st, v1alpha1.EphemeralJobSucceeded, v1alpha1.EphemeralJobSucceed, ReasonSucceeded, "job success to run all tasks", now)
		return
	case st.Succeeded == 0:
		finish(st, v1alpha1.EphemeralJobFailed, v1alpha1.EphemeralJobFailure, ReasonFailed,
			fmt.Sprintf("job failed to run all tasks, %d/%d pods failed", st.Failed, st.Matches), now)
		return
	default:
		finish(st, v1alpha1.EphemeralJobFailed, v1alpha1.EphemeralJobFailure, ReasonFailed,
			fmt.Sprintf("job finished with mixed outcomes: %d/%d pods succeeded, %d/%d pods failed", st.Succeeded, st.Matches, st.Failed, st.Matches), now)
		return
	}
	if st.Failed > 0 {
		setCondition(st, v1alpha1.EphemeralJobFailure, corev1.ConditionTrue, ReasonContainerFailed,
			fmt.Sprintf("%d/%d pods have a failed ephemeral container", st.Failed, st.Matches), now)
	}
	if job.Spec.Paused {
		st.Phase = v1alpha1.EphemeralJobPause
		return
	}
	if pastDeadline(job, st, now) {
		finish(st, v1alpha1.EphemeralJobFailed, v1alpha1.EphemeralJobFailure, ReasonDeadlineExceeded,
			fmt.Sprintf("EphemeralJob %s/%s was active longer than specified deadline", job.Namespace, job.Name), now)
	}
}

// pastDeadline reports whether activeDeadlineSeconds have passed since status.startTime.
func pastDeadline(job *v1alpha1.EphemeralJob, st *v1alpha1.EphemeralJobStatus, now metav1.Time) bool {
	d, ok := deadline(job, st)
	return ok && !now.Time.Before(d)
}
