package ephemeraljob

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// DefaultTTL is how long a finished job is kept when spec.ttlSecondsAfterFinished is unset
// (OpenKruise's 1800 s; the defaulting webhook sets it too).
const DefaultTTL = 1800 * time.Second

// Snapshot is what a plan reads.
type Snapshot struct {
	Job *v1alpha1.EphemeralJob
	// Pods are the pods of the job's namespace its selector matches, in any phase.
	Pods []*corev1.Pod
	// SelectorError says why the job's selector selects nothing (nil, or invalid); empty when valid.
	SelectorError string
	// Pending are pods injected whose new containers the cache does not show yet.
	Pending sets.Set[types.UID]
}

// Plan is what one reconcile does.
type Plan struct {
	// Status is the job's new status; write it only when it differs from the old.
	Status v1alpha1.EphemeralJobStatus
	// Inject are the pods to get the job's containers now, in order.
	Inject []*corev1.Pod
	// Conflicts are eligible pods holding a container named like the job's.
	Conflicts []Conflict
	// Finished is set when the job finishes in this plan (the condition that says how).
	Finished *v1alpha1.EphemeralJobCondition
	// Delete is set when the job's TTL after finishing has passed.
	Delete bool
	// RequeueAfter is when the plan changes by time alone (deadline, TTL); 0: never.
	RequeueAfter time.Duration
	// Note explains the plan in words, for logs and tests.
	Note string
}

// Compute plans one step of the job at now. It never reads anything but its arguments.
func Compute(snap Snapshot, now time.Time) Plan {
	job, mnow := snap.Job, metav1.NewTime(now)
	if job.Status.CompletionTime != nil {
		due := job.Status.CompletionTime.Add(ttl(job))
		if !now.Before(due) {
			return Plan{Status: job.Status, Delete: true, Note: "finished; TTL after finishing passed: delete"}
		}
		return Plan{Status: job.Status, RequeueAfter: due.Sub(now), Note: fmt.Sprintf("finished; deleted at %s", due.UTC().Format(time.RFC3339))}
	}
	st := *job.Status.DeepCopy()
	if st.StartTime == nil {
		st.StartTime = &mnow
	}
	if !hasCondition(&st, v1alpha1.EphemeralJobInitialized) {
		setCondition(&st, v1alpha1.EphemeralJobInitialized, corev1.ConditionTrue, ReasonInitialized, "", mnow)
	}
	if msg := invalid(snap); msg != "" {
		st.Phase = v1alpha1.EphemeralJobError
		setCondition(&st, v1alpha1.EphemeralJobConditionError, corev1.ConditionTrue, ReasonError, msg, mnow)
		return Plan{Status: st, Note: "error: " + msg}
	}
	targets, conflicts := selectTargets(job, snap.Pods, snap.Pending)
	names := templateNames(job)
	states := make([]PodState, len(targets))
	for i, t := range targets {
		if t.injected {
			states[i] = StateOf(names, t.pod)
		}
	}
	counts(&st, states)
	outcome(job, &st, mnow)
	plan := Plan{Status: st, Conflicts: conflicts}
	if st.CompletionTime != nil {
		plan.Finished = finishedCondition(&st)
		plan.RequeueAfter = ttl(job)
		plan.Note = fmt.Sprintf("finished %s", st.Phase)
		return plan
	}
	if d, ok := deadline(job, &st); ok {
		plan.RequeueAfter = d.Sub(now)
	}
	if st.Phase == v1alpha1.EphemeralJobPause {
		plan.Note = "paused: no injection"
		return plan
	}
	plan.Inject = toInject(job, targets, states)
	plan.Note = fmt.Sprintf("%s: %d targets, inject %d", st.Phase, len(targets), len(plan.Inject))
	return plan
}

// toInject are the targets not yet injected, oldest first, as many as parallelism allows beside
// the injected targets still in flight (waiting or running).
func toInject(job *v1alpha1.EphemeralJob, targets []target, states []PodState) []*corev1.Pod {
	room := int(parallelism(job))
	var fresh []*corev1.Pod
	for i, t := range targets {
		switch {
		case !t.injected:
			fresh = append(fresh, t.pod)
		case states[i] == PodWaiting || states[i] == PodRunning:
			room--
		}
	}
	if room <= 0 {
		return nil
	}
	return fresh[:min(room, len(fresh))]
}

// invalid says why the job cannot run (no containers, no usable selector); empty when it can.
func invalid(snap Snapshot) string {
	if len(snap.Job.Spec.Template.EphemeralContainers) == 0 {
		return "spec.template.ephemeralContainers is empty"
	}
	if snap.SelectorError != "" {
		return "spec.selector: " + snap.SelectorError
	}
	return ""
}

// parallelism is spec.parallelism, 1 when unset.
func parallelism(job *v1alpha1.EphemeralJob) int32 {
	if job.Spec.Parallelism == nil {
		return 1
	}
	return *job.Spec.Parallelism
}

// ttl is how long the job is kept after it finished.
func ttl(job *v1alpha1.EphemeralJob) time.Duration {
	if job.Spec.TTLSecondsAfterFinished == nil {
		return DefaultTTL
	}
	return time.Duration(max(*job.Spec.TTLSecondsAfterFinished, 0)) * time.Second
}

// deadline is when the job fails for running too long, if it has a deadline and has started.
func deadline(job *v1alpha1.EphemeralJob, st *v1alpha1.EphemeralJobStatus) (time.Time, bool) {
	if job.Spec.ActiveDeadlineSeconds == nil || st.StartTime == nil {
		return time.Time{}, false
	}
	return st.StartTime.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second), true
}

// finishedCondition is the condition that says how a finished status ended.
func finishedCondition(st *v1alpha1.EphemeralJobStatus) *v1alpha1.EphemeralJobCondition {
	typ := v1alpha1.EphemeralJobFailure
	if st.Phase == v1alpha1.EphemeralJobSucceeded {
		typ = v1alpha1.EphemeralJobSucceed
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			c := st.Conditions[i]
			return &c
		}
	}
	return nil
}
