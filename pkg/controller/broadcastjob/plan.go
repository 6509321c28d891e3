package broadcastjob

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
)

// Snapshot is what one reconcile reads: the job, every node, and the pods the job controls.
type Snapshot struct {
	Job   *v1beta1.BroadcastJob
	Nodes []*corev1.Node
	Pods  []*corev1.Pod
}

// Plan is what one reconcile does, each step with its reason.
type Plan struct {
	// Create names the nodes that get a pod (NewPod), in order.
	Create []string
	// Delete are the pods to delete.
	Delete []Deletion
	// Status is the job's status once the plan is carried out (creations counted active).
	Status v1beta1.BroadcastJobStatus
	// Events are emitted once the status is written.
	Events []Event
	// DeleteJob: the job's ttlSecondsAfterFinished has passed.
	DeleteJob bool
	// RequeueAfter is when the plan may change without any event (a deadline, a TTL); 0: never.
	RequeueAfter time.Duration
}

// Deletion is a pod to delete and why.
type Deletion struct {
	Pod *corev1.Pod
	Why string
}

// Event is one event on the job.
type Event struct {
	Type, Reason, Message string
}

// Compute plans one step of s.Job at now. It reads nothing else and changes nothing.
func Compute(s Snapshot, now time.Time) Plan {
	job := s.Job
	if Finished(job) {
		return planFinished(job, now)
	}
	p := Plan{Status: *job.Status.DeepCopy()}
	st := &p.Status
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: now.Truncate(time.Second)} // as stored (RFC 3339)
	}
	if st.Phase == "" {
		st.Phase = v1beta1.BroadcastJobPhaseRunning
	}
	limit := job.Spec.FailurePolicy.RestartLimit
	states := make(map[*corev1.Pod]podState, len(s.Pods))
	var active, succeeded, failed int32
	for _, pod := range s.Pods {
		ps := stateOf(pod, limit)
		states[pod] = ps
		switch ps {
		case podActive:
			active++
		case podSucceeded:
			succeeded++
		case podFailed, podOverLimit:
			failed++
		}
	}
	place := placePods(job, s.Nodes, s.Pods, states)
	st.Active, st.Succeeded, st.Failed, st.Desired = active, succeeded, failed, int32(len(place.desired))
	p.Events = append(p.Events, place.events...)

	nowT := metav1.NewTime(now)
	if reason, msg := failure(job, failed, st.StartTime.Time, now); reason != "" {
		p.failJob(job, s.Pods, states, reason, msg, nowT)
		p.RequeueAfter = untilExpiry(job, st, now)
		return p
	}
	p.Delete = append(p.Delete, place.evict...)
	p.hold(job, failed)
	if st.Phase == v1beta1.BroadcastJobPhaseRunning && job.DeletionTimestamp == nil {
		p.createPods(job, place)
		if done(job, place.desired, states) {
			p.completeJob(job, s.Pods, states, nowT)
			p.RequeueAfter = untilExpiry(job, st, now)
			return p
		}
	}
	if at := deadline(job, st.StartTime.Time); !at.IsZero() {
		p.RequeueAfter = max(at.Sub(now), time.Millisecond)
	}
	return p
}

// planFinished: a finished job only waits for its ttlSecondsAfterFinished.
func planFinished(job *v1beta1.BroadcastJob, now time.Time) Plan {
	p := Plan{Status: job.Status}
	if at := expiry(job); !at.IsZero() {
		if left := at.Sub(now); left > 0 {
			p.RequeueAfter = left
		} else {
			p.DeleteJob = true
		}
	}
	return p
}

// untilExpiry is how long a job that finishes now with status st waits before its deletion.
func untilExpiry(job *v1beta1.BroadcastJob, st *v1beta1.BroadcastJobStatus, now time.Time) time.Duration {
	j := &v1beta1.BroadcastJob{Spec: job.Spec, Status: *st}
	if at := expiry(j); !at.IsZero() {
		return max(at.Sub(now), time.Millisecond)
	}
	return 0
}

// failure says whether (and why) the job fails now: a failed pod under FailFast, or an Always job
// past its activeDeadlineSeconds. It returns the event reason and the condition message.
func failure(job *v1beta1.BroadcastJob, failed int32, start, now time.Time) (string, string) {
	if failed > 0 && job.Spec.FailurePolicy.Type == v1beta1.BroadcastJobFailurePolicyTypeFailFast {
		return ReasonFailedPodFound, failFastMessage
	}
	if at := deadline(job, start); !at.IsZero() && !now.Before(at) {
		return ReasonDeadlineExceeded, deadlineMessage(job)
	}
	return "", ""
}

// failJob ends the job Failed: its pods that have not ended are deleted, and those that were
// active count as failed (OpenKruise counts them so).
func (p *Plan) failJob(job *v1beta1.BroadcastJob, pods []*corev1.Pod, states map[*corev1.Pod]podState, reason, msg string, now metav1.Time) {
	st := &p.Status
	for _, pod := range pods {
		switch states[pod] {
		case podActive:
			st.Active--
			st.Failed++
			p.Delete = append(p.Delete, Deletion{Pod: pod, Why: "the job failed: " + msg})
		case podOverLimit:
			p.Delete = append(p.Delete, Deletion{Pod: pod, Why: "the job failed: " + msg})
		}
	}
	finish(st, v1beta1.BroadcastJobFailed, msg, now)
	p.Events = append(p.Events, Event{corev1.EventTypeWarning, reason,
		fmt.Sprintf("%s: %d pods succeeded, %d pods failed", msg, st.Succeeded, st.Failed)})
}

// completeJob ends the job Complete; pods still restarting past their restart limit are deleted.
func (p *Plan) completeJob(job *v1beta1.BroadcastJob, pods []*corev1.Pod, states map[*corev1.Pod]podState, now metav1.Time) {
	st := &p.Status
	for _, pod := range pods {
		if states[pod] == podOverLimit {
			p.Delete = append(p.Delete, Deletion{Pod: pod, Why: "the job completed and the pod is past its restart limit"})
		}
	}
	finish(st, v1beta1.BroadcastJobComplete, completedMessage(st.Succeeded, st.Failed), now)
	p.Events = append(p.Events, Event{corev1.EventTypeNormal, ReasonJobComplete, completedEvent(job, st.Succeeded, st.Failed)})
}

// hold sets the phase from spec.paused and, under failure policy Pause, from failed pods; it
// announces the transitions out of and (for a failure) into paused.
func (p *Plan) hold(job *v1beta1.BroadcastJob, failed int32) {
	st := &p.Status
	was := st.Phase
	switch {
	case job.Spec.Paused:
		st.Phase = v1beta1.BroadcastJobPhasePaused
	case failed > 0 && job.Spec.FailurePolicy.Type == v1beta1.BroadcastJobFailurePolicyTypePause:
		st.Phase = v1beta1.BroadcastJobPhasePaused
		if was != v1beta1.BroadcastJobPhasePaused {
			p.Events = append(p.Events, Event{corev1.EventTypeWarning, ReasonPaused, "job is paused, due to failed pod"})
		}
	default:
		st.Phase = v1beta1.BroadcastJobPhaseRunning
		if was == v1beta1.BroadcastJobPhasePaused {
			p.Events = append(p.Events, Event{corev1.EventTypeNormal, ReasonContinue, "continue to process job"})
		}
	}
}

// createPods plans pods on the eligible nodes without one, in name order, while fewer than
// parallelism pods are active.
func (p *Plan) createPods(job *v1beta1.BroadcastJob, place placement) {
	if len(place.rest) == 0 {
		return
	}
	st := &p.Status
	limit, err := parallelism(job.Spec.Parallelism, len(place.desired))
	if err != nil {
		p.Events = append(p.Events, Event{corev1.EventTypeWarning, ReasonInvalidSpec, fmt.Sprintf("spec.parallelism: %v", err)})
		return
	}
	if st.Active > limit {
		p.Events = append(p.Events, Event{corev1.EventTypeWarning, ReasonTooManyActivePods, "Number of active pods exceed parallelism limit"})
		return
	}
	n := min(int(limit-st.Active), len(place.rest))
	p.Create = append(p.Create, place.rest[:n]...)
	st.Active += int32(n)
}

// parallelism is the most pods the job may run at once: spec.parallelism, a percentage of the
// desired nodes rounded up; unset means no limit.
func parallelism(par *intstr.IntOrString, desired int) (int32, error) {
	if par == nil {
		return math.MaxInt32, nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(par, desired, true)
	if err != nil {
		return 0, err
	}
	return int32(min(max(n, 0), math.MaxInt32)), nil
}

// done reports whether an Always job has completed: desired nodes, each with a pod that ended.
func done(job *v1beta1.BroadcastJob, desired map[string]*corev1.Pod, states map[*corev1.Pod]podState) bool {
	if !alwaysCompletes(job) || len(desired) == 0 {
		return false
	}
	for _, pod := range desired {
		if pod == nil || !states[pod].ended() {
			return false
		}
	}
	return true
}

// placement is where the job runs.
type placement struct {
	// desired maps each node the job runs on to its pod (nil: none yet).
	desired map[string]*corev1.Pod
	// rest are the desired nodes without a pod, by name.
	rest []string
	// evict are pods on nodes that no longer take them.
	evict []Deletion
	// events report duplicate pods.
	events []Event
}

// placePods decides the job's nodes from nodeeligibility: a node with a pod keeps it while the
// pod's own spec may stay there (stays); a node without one is desired when the template is Run
// there.
// Pods not yet ended whose node is gone are deleted: no scheduler or kubelet will ever run them.
func placePods(job *v1beta1.BroadcastJob, nodes []*corev1.Node, pods []*corev1.Pod, states map[*corev1.Pod]podState) placement {
	place := placement{desired: map[string]*corev1.Pod{}}
	byNode := map[string]*corev1.Pod{}
	for _, pod := range pods {
		node := nodeeligibility.TargetNode(pod)
		if prev, ok := byNode[node]; ok && node != "" {
			place.events = append(place.events, Event{corev1.EventTypeWarning, ReasonDuplicatePod,
				fmt.Sprintf("Duplicated pod %s found on same node %s", pod.Name, node)})
			if !prefer(pod, prev, states) {
				continue
			}
		}
		byNode[node] = pod
	}
	known := map[string]bool{}
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	rules := nodeeligibility.Rules{Resources: true}
	for _, node := range sorted {
		known[node.Name] = true
		pod := byNode[node.Name]
		if pod == nil {
			if nodeeligibility.Evaluate(node, &job.Spec.Template.Spec, rules).Run {
				place.desired[node.Name] = nil
				place.rest = append(place.rest, node.Name)
			}
			continue
		}
		if v := nodeeligibility.Evaluate(node, &pod.Spec, rules); !stays(pod, v) {
			if pod.DeletionTimestamp == nil {
				place.evict = append(place.evict, Deletion{Pod: pod, Why: fmt.Sprintf("node %s no longer takes it: %s", node.Name, v.Reason)})
			}
			continue
		}
		place.desired[node.Name] = pod
	}
	for _, pod := range pods {
		if node := nodeeligibility.TargetNode(pod); node != "" && !known[node] && states[pod] == podActive {
			place.evict = append(place.evict, Deletion{Pod: pod, Why: fmt.Sprintf("node %s no longer exists", node)})
		}
	}
	return place
}

// stays reports whether pod may stay on its node given the node's verdict on the pod's spec: a
// bound pod while it may continue there, a pod not yet bound only if it may still be placed there
// (the scheduler would never bind it otherwise).
func stays(pod *corev1.Pod, v nodeeligibility.Verdict) bool {
	if pod.Spec.NodeName == "" {
		return v.Run
	}
	return v.Continue
}

// prefer reports whether pod, rather than prev, stands for their node: one not being deleted,
// else the newer.
func prefer(pod, prev *corev1.Pod, states map[*corev1.Pod]podState) bool {
	if (states[pod] == podTerminating) != (states[prev] == podTerminating) {
		return states[prev] == podTerminating
	}
	return prev.CreationTimestamp.Before(&pod.CreationTimestamp)
}
