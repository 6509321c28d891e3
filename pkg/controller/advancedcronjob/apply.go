package advancedcronjob

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// apply carries out p, the only writer of children: the deletions, then the run's child. It
// returns the child it created (or found already created for that tick by this cron job); nil
// when p runs nothing or the name is taken by another object.
func (r *Reconciler) apply(ctx context.Context, s *snapshot, p *Plan) (*child, error) {
	acj := s.ACJ
	for _, e := range p.Events {
		r.Recorder.Eventf(acj, nil, e.Type, e.Reason, "Schedule", "%s", e.Note)
	}
	for _, d := range p.Delete {
		if err := r.deleteChild(ctx, s, d); err != nil {
			return nil, err
		}
	}
	if p.Run.IsZero() {
		return nil, nil
	}
	return r.createChild(ctx, s, p.Run)
}

func (r *Reconciler) deleteChild(ctx context.Context, s *snapshot, d Deletion) error {
	uid := d.Child.UID
	err := r.Client.Delete(ctx, d.Child.Object, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) { // gone, or another object now has the name
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete %s %s (%s): %w", s.Kind, d.Child.Name, d.Reason, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("deleted child", "child", klog.KObj(d.Child.Object), "reason", d.Reason)
	r.Recorder.Eventf(s.ACJ, d.Child.Object, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Delete", "Deleted %s %s: %s", s.Kind, d.Child.Name, d.Reason)
	return nil
}

// createChild creates the child for the tick at and records it, so the next reconcile counts
// the tick as run even before the cache or the status shows it.
func (r *Reconciler) createChild(ctx context.Context, s *snapshot, at time.Time) (*child, error) {
	acj := s.ACJ
	obj := newChild(acj, s.Kind, at)
	err := r.Client.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		return r.existingChild(ctx, s, at)
	}
	if err != nil {
		r.Recorder.Eventf(acj, nil, corev1.EventTypeWarning, ReasonFailedCreate, "Create", "Error creating %s %s: %v", s.Kind, obj.GetName(), err)
		return nil, fmt.Errorf("create %s %s for the run of %s: %w", s.Kind, obj.GetName(), at.Format(time.RFC3339), err)
	}
	r.created.record(acj, at, r.Clock.Now())
	ctrl.LoggerFrom(ctx).Info("created child", "child", klog.KObj(obj), "scheduledAt", at.Format(time.RFC3339))
	r.Recorder.Eventf(acj, obj, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Create", "Created %s %s for the run of %s", s.Kind, obj.GetName(), at.Format(time.RFC3339))
	return &child{Name: obj.GetName(), UID: obj.GetUID(), ScheduledAt: &at, Object: obj}, nil
}

// existingChild handles a child name already taken: by this cron job's child for the tick (a
// cache behind the API server), the run is done; by anything else, the run cannot happen.
func (r *Reconciler) existingChild(ctx context.Context, s *snapshot, at time.Time) (*child, error) {
	obj := newChild(s.ACJ, s.Kind, at) // a fresh object of the right type to read into
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return nil, fmt.Errorf("read %s %s, which already exists: %w", s.Kind, obj.GetName(), err)
	}
	if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != s.ACJ.UID {
		r.Recorder.Eventf(s.ACJ, obj, corev1.EventTypeWarning, ReasonFailedCreate, "Create",
			"Cannot start the run of %s: a %s named %s exists and is not this cron job's", at.Format(time.RFC3339), s.Kind, obj.GetName())
		return nil, nil
	}
	r.created.record(s.ACJ, at, r.Clock.Now())
	return &child{Name: obj.GetName(), UID: obj.GetUID(), ScheduledAt: &at, Object: obj}, nil
}
