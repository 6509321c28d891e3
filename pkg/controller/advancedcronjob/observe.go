package advancedcronjob

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// childState is where a child job is in its life.
type childState int

const (
	childActive childState = iota
	childSucceeded
	childFailed
)

// child is what the planner reads of one job a cron job created, whatever its kind.
type child struct {
	Name string
	UID  types.UID
	// ScheduledAt is the tick the child runs for, from ScheduledAtAnnotation; nil when the
	// annotation is missing or unreadable.
	ScheduledAt *time.Time
	// StartTime is when the child's own controller started it; nil before that.
	StartTime *time.Time
	State     childState
	// Deleting: the child has a deletionTimestamp; it no longer counts as running.
	Deleting bool
	// Object is the cached object (read only), for the writer to delete.
	Object client.Object
}

// snapshot is one reconcile's immutable view of a cron job and its children.
type snapshot struct {
	ACJ *v1beta1.AdvancedCronJob
	// Kind is the kind the template creates; "" when TemplateErr is set.
	Kind        v1beta1.AdvancedCronJobTemplateKind
	TemplateErr error
	// Children are the jobs of Kind the cron job controls.
	Children []child
	// Created is the latest tick this manager created a child for and may not yet see in the
	// cache or the status; zero when none.
	Created time.Time
	// PendingUntil: the child for Created is not in the cache yet, so Children may miss a
	// running job; the controller waits for it until then. Zero when nothing is pending.
	PendingUntil time.Time
}

// templateKind is the kind of job spec's template creates: exactly one member must be set.
func templateKind(t *v1beta1.AdvancedCronJobTemplate) (v1beta1.AdvancedCronJobTemplateKind, error) {
	var kinds []v1beta1.AdvancedCronJobTemplateKind
	if t.JobTemplate != nil {
		kinds = append(kinds, v1beta1.AdvancedCronJobJobTemplateKind)
	}
	if t.BroadcastJobTemplate != nil {
		kinds = append(kinds, v1beta1.AdvancedCronJobBroadcastJobTemplateKind)
	}
	if t.ImageListPullJobTemplate != nil {
		kinds = append(kinds, v1beta1.AdvancedCronJobImageListPullJobTemplateKind)
	}
	switch len(kinds) {
	case 1:
		return kinds[0], nil
	case 0:
		return "", fmt.Errorf("spec.template sets none of jobTemplate, broadcastJobTemplate and imageListPullJobTemplate")
	default:
		return "", fmt.Errorf("spec.template sets %d templates (%v); exactly one is allowed", len(kinds), kinds)
	}
}

// observe reads acj's children of its template's kind from the cache.
func observe(ctx context.Context, c client.Reader, acj *v1beta1.AdvancedCronJob) (*snapshot, error) {
	snap := &snapshot{ACJ: acj}
	snap.Kind, snap.TemplateErr = templateKind(&acj.Spec.Template)
	ns := client.InNamespace(acj.Namespace)
	switch snap.Kind {
	case v1beta1.AdvancedCronJobJobTemplateKind:
		list := &batchv1.JobList{}
		if err := c.List(ctx, list, ns); err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		for i := range list.Items {
			snap.add(&list.Items[i], jobState(&list.Items[i]), list.Items[i].Status.StartTime)
		}
	case v1beta1.AdvancedCronJobBroadcastJobTemplateKind:
		list := &v1beta1.BroadcastJobList{}
		if err := c.List(ctx, list, ns); err != nil {
			return nil, fmt.Errorf("list broadcastjobs: %w", err)
		}
		for i := range list.Items {
			snap.add(&list.Items[i], broadcastJobState(&list.Items[i]), list.Items[i].Status.StartTime)
		}
	case v1beta1.AdvancedCronJobImageListPullJobTemplateKind:
		list := &v1beta1.ImageListPullJobList{}
		if err := c.List(ctx, list, ns); err != nil {
			return nil, fmt.Errorf("list imagelistpulljobs: %w", err)
		}
		for i := range list.Items {
			snap.add(&list.Items[i], imageListPullJobState(&list.Items[i]), list.Items[i].Status.StartTime)
		}
	}
	return snap, nil
}

// add records o when the cron job controls it.
func (s *snapshot) add(o client.Object, state childState, start *metav1.Time) {
	if ref := metav1.GetControllerOf(o); ref == nil || ref.UID != s.ACJ.UID {
		return
	}
	c := child{Name: o.GetName(), UID: o.GetUID(), State: state, Deleting: o.GetDeletionTimestamp() != nil, Object: o,
		ScheduledAt: scheduledAt(o)}
	if start != nil {
		t := start.Time
		c.StartTime = &t
	}
	s.Children = append(s.Children, c)
}

// scheduledAt reads a child's ScheduledAtAnnotation (RFC 3339).
func scheduledAt(o client.Object) *time.Time {
	raw, ok := o.GetAnnotations()[ScheduledAtAnnotation]
	if !ok {
		return nil
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return nil
	}
	return &t
}

// jobState: a Job is finished when its Complete or Failed condition is True (as Kubernetes'
// CronJob and OpenKruise read it).
func jobState(j *batchv1.Job) childState {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return childSucceeded
		case batchv1.JobFailed:
			return childFailed
		}
	}
	return childActive
}

// broadcastJobState: a BroadcastJob is finished when its Complete or Failed condition is True,
// as OpenKruise reads it. (A completionPolicy Never job never finishes.)
func broadcastJobState(j *v1beta1.BroadcastJob) childState {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case v1beta1.BroadcastJobComplete:
			return childSucceeded
		case v1beta1.BroadcastJobFailed:
			return childFailed
		}
	}
	return childActive
}

// imageListPullJobState: an ImageListPullJob is finished once it has a completionTime; it
// succeeded when every image did, as OpenKruise reads it.
func imageListPullJobState(j *v1beta1.ImageListPullJob) childState {
	switch {
	case j.Status.CompletionTime == nil:
		return childActive
	case j.Status.Succeeded == j.Status.Desired:
		return childSucceeded
	default:
		return childFailed
	}
}
