package imagepulljob

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// SplitImage splits an image reference into the NodeImage key (the name, registry included) and
// the tag ("latest" when none is given). Digest references are not supported (the webhook rejects
// them).
func SplitImage(image string) (name, tag string) {
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		return image[:colon], image[colon+1:]
	}
	return image, "latest"
}

// NodeTask is what one selected node's NodeImage says about the job's tag.
type NodeTask struct {
	Node string
	// Owned: the job is among the tag's owners.
	Owned bool
	// Status is the node's report on the tag at the tag's current version; nil when none yet.
	Status *v1beta1.NodeImageTagStatus
	// Missing: the job names the node but it has no NodeImage (yet): the job waits for it.
	Missing bool
	// Full: the node's NodeImage lists v1beta1.MaxNodeImageImages images, none of them the job's,
	// so the job's image cannot be added: the node counts as failed.
	Full bool
}

func (n NodeTask) phase() v1beta1.NodeImagePullPhase {
	if n.Status == nil {
		return ""
	}
	return n.Status.Phase
}

// Plan is what one reconcile of a job does.
type Plan struct {
	// Start are the nodes to ask to pull now.
	Start []string
	// Release are the nodes whose tag the job gives up (unfinished tasks of an ended job).
	Release []string
	// Status is the job's new status.
	Status v1beta1.ImagePullJobStatus
	// Delete: the job's ttlSecondsAfterFinished has passed.
	Delete bool
	// RequeueAfter is when the job must be looked at again without any event (deadline, TTL).
	RequeueAfter time.Duration
}

// Parallelism is how many nodes of desired may pull at once.
func Parallelism(p *intstr.IntOrString, desired int) int {
	if p == nil {
		return 1
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(p, desired, true)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// PlanJob plans the job's next step from its nodes (the selected ones, by name) at now.
func PlanJob(job *v1beta1.ImagePullJob, nodes []NodeTask, now time.Time) Plan {
	st := *job.Status.DeepCopy()
	if st.StartTime == nil {
		t := metav1.NewTime(now).Rfc3339Copy()
		st.StartTime = &t
	}
	cp := job.Spec.CompletionPolicy
	if st.CompletionTime != nil {
		return planEnded(job, st, nodes, now)
	}
	slices.SortFunc(nodes, func(a, b NodeTask) int { return strings.Compare(a.Node, b.Node) })
	p := Plan{}
	var active, succeeded, failed int
	var failedNodes, pending, missing, full []string
	for _, n := range nodes {
		switch {
		case n.Missing:
			missing = append(missing, n.Node)
		case !n.Owned && n.Full:
			failed++
			failedNodes = append(failedNodes, n.Node)
			full = append(full, n.Node)
		case !n.Owned:
			pending = append(pending, n.Node)
		case n.phase() == v1beta1.NodeImagePullSucceeded:
			succeeded++
		case n.phase() == v1beta1.NodeImagePullFailed:
			failed++
			failedNodes = append(failedNodes, n.Node)
		default:
			active++
		}
	}
	if room := Parallelism(job.Spec.Parallelism, len(nodes)) - active; room > 0 {
		p.Start = pending[:min(room, len(pending))]
		active += len(p.Start)
	}
	st.Desired, st.Active, st.Succeeded, st.Failed, st.FailedNodes = int32(len(nodes)), int32(active), int32(succeeded), int32(failed), failedNodes
	waiting := len(pending) - len(p.Start) + len(missing)
	st.Message = fmt.Sprintf("%d/%d nodes pulled, %d pulling, %d failed, %d waiting", succeeded, len(nodes), active, failed, waiting)
	if len(missing) > 0 {
		st.Message += fmt.Sprintf("; no NodeImage (yet) for %s", strings.Join(missing, ", "))
	}
	fullNote := ""
	if len(full) > 0 {
		fullNote = fmt.Sprintf("; the NodeImage of %s already lists %d images, the most it may", strings.Join(full, ", "), v1beta1.MaxNodeImageImages)
	}
	st.Message += fullNote
	if cp.Type == v1beta1.ImagePullJobCompletionNever {
		st.Message = "pulling on every selected node, new ones included (completionPolicy Never): " + st.Message
		p.Status = st
		return p
	}
	done := metav1.NewTime(now).Rfc3339Copy()
	switch {
	case active == 0 && waiting == 0:
		st.CompletionTime = &done
		st.Message = fmt.Sprintf("job finished: %d/%d nodes pulled, %d failed", succeeded, len(nodes), failed) + fullNote
		p.Status = st
		return finish(job, p, nodes, now)
	case cp.ActiveDeadlineSeconds != nil:
		deadline := st.StartTime.Add(time.Duration(*cp.ActiveDeadlineSeconds) * time.Second)
		if !now.Before(deadline) {
			st.CompletionTime = &done
			st.Message = fmt.Sprintf("job stopped at activeDeadlineSeconds %d: %d/%d nodes pulled, %d failed, %d unfinished",
				*cp.ActiveDeadlineSeconds, succeeded, len(nodes), failed, active+waiting)
			p.Status = st
			p.Start = nil
			return finish(job, p, nodes, now)
		}
		p.RequeueAfter = deadline.Sub(now)
	}
	p.Status = st
	return p
}

// finish releases the unfinished tasks of a job that just ended and schedules its deletion.
func finish(job *v1beta1.ImagePullJob, p Plan, nodes []NodeTask, now time.Time) Plan {
	ended := planEnded(job, p.Status, nodes, now)
	ended.Status = p.Status
	return ended
}

// planEnded handles an ended job: its status is kept as it was; unfinished tasks are released;
// the job is deleted once ttlSecondsAfterFinished has passed.
func planEnded(job *v1beta1.ImagePullJob, st v1beta1.ImagePullJobStatus, nodes []NodeTask, now time.Time) Plan {
	p := Plan{Status: st}
	for _, n := range nodes {
		if n.Owned && n.phase() != v1beta1.NodeImagePullSucceeded && n.phase() != v1beta1.NodeImagePullFailed {
			p.Release = append(p.Release, n.Node)
		}
	}
	if ttl := job.Spec.CompletionPolicy.TTLSecondsAfterFinished; ttl != nil {
		at := st.CompletionTime.Add(time.Duration(*ttl) * time.Second)
		if !now.Before(at) {
			p.Delete = true
		} else {
			p.RequeueAfter = at.Sub(now)
		}
	}
	return p
}

// OwnerRef is how a job appears among a NodeImage tag's owners.
func OwnerRef(job *v1beta1.ImagePullJob) OwnerKey {
	return OwnerKey{Namespace: job.Namespace, Name: job.Name, UID: job.UID}
}

// OwnerKey identifies a job among a tag's owners.
type OwnerKey struct {
	Namespace, Name string
	UID             types.UID
}

// BlockStart is p without its starts, for a job that may not start pulls now (reason says why,
// e.g. a refused pull secret): the nodes it would have started stay waiting, and the status
// message leads with the reason. Pulls already running go on.
func BlockStart(p Plan, reason string) Plan {
	if len(p.Start) == 0 {
		return p
	}
	p.Status = *p.Status.DeepCopy()
	p.Status.Active -= int32(len(p.Start))
	p.Start = nil
	p.Status.Message = "pulls not started: " + reason + "; " + p.Status.Message
	return p
}
