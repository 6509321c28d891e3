package workloadloop

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/predownload"
)

// ExpectationTimeout is how long a controller waits for the cache to show its own writes before
// it checks them against the API server (podcontrol.Expectations.Pending).
const ExpectationTimeout = 30 * time.Second

// Kind is one workload kind's part of the reconcile: W is the workload, O its observation, P its
// plan and S its status.
type Kind[W client.Object, O, P, S any] interface {
	// Observe reads the workload's pods, revisions and claims, from the cache or (live) around it.
	Observe(ctx context.Context, w W, live bool) (O, error)
	// ObserveFailed is the reconcile's result when Observe fails with err.
	ObserveFailed(ctx context.Context, key string, w W, err error) (ctrl.Result, error)
	// Pods are the observed pods by name.
	Pods(obs O) map[string]*corev1.Pod
	// Plan is the kind's pure planner.
	Plan(obs O, now time.Time) P
	// Apply carries out the plan (Apply, with the kind's Writes).
	Apply(ctx context.Context, w W, obs O, plan P) Errors
	// PreDownload is the update as pkg/machinery/predownload reads it; false: nothing to decide in
	// this reconcile (the update revision is created first).
	PreDownload(w W, obs O) (predownload.Input, bool)
	// Waits say which pods the plan refused to move and why ("" for none), and what it waits for.
	Waits(w W, plan P) (refused string, notes []string)
	// Status is the workload's status from this observation and apply, with its progress events
	// and metrics reported; significant: it must be written at once (podcontrol.StatusPacer).
	Status(w W, obs O, errs Errors, now time.Time) (status S, significant bool)
	// StatusOf is the status w has.
	StatusOf(w W) S
	// Requeue adds when the plan and the status ask to run again.
	Requeue(w W, plan P, status S, now time.Time, q *podcontrol.Requeue)
	// Forget drops what the kind keeps in memory about the workload of req, which is gone.
	Forget(req ctrl.Request)
}

// State is what the loop keeps between reconciles, per workload; its zero value is ready.
type State struct {
	waits  podcontrol.WaitReporter
	status podcontrol.StatusPacer
	pacer  podcontrol.ReconcilePacer
}

func (s *State) forget(key string) {
	s.waits.Forget(key)
	s.status.Forget(key)
	s.pacer.Forget(key)
}

// Shared is what a workload reconciler hands the loop.
type Shared struct {
	Client       client.Client
	Recorder     events.EventRecorder
	Clock        clock.PassiveClock
	Expectations *podcontrol.Expectations
	// Control writes the status.
	Control *podcontrol.Control
	State   *State
	// Name is the kind in errors ("cloneset").
	Name string
	// PreDownload is the kind's pre-download feature gate.
	PreDownload bool
	// CacheLag, if set, is told of each read around a lagging cache (the workload's own writes
	// not in it after ExpectationTimeout), for the kind's metrics.
	CacheLag func(w client.Object)
}

// Reconcile brings the workload named by req, read into w, one step closer to its spec.
func Reconcile[W client.Object, O, P, S any](ctx context.Context, req ctrl.Request, sh Shared, k Kind[W, O, P, S], w W) (ctrl.Result, error) {
	key := req.String()
	if hold := sh.State.pacer.Hold(key, sh.Clock.Now()); hold > 0 {
		return ctrl.Result{RequeueAfter: hold}, nil
	}
	if err := sh.Client.Get(ctx, req.NamespacedName, w); err != nil {
		if apierrors.IsNotFound(err) {
			sh.Expectations.Forget(key)
			if sh.Control != nil && sh.Control.Updates != nil {
				sh.Control.Updates.Forget(key)
			}
			sh.State.forget(key)
			k.Forget(req)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if w.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil // owned pods and revisions go with garbage collection
	}
	now := sh.Clock.Now()
	var think time.Duration // observe, plan and status: what grows with the pods (podcontrol.ReconcilePacer)
	defer func() { sh.State.pacer.Done(key, think, sh.Clock.Now()) }()
	obs, err := k.Observe(ctx, w, false)
	if err != nil {
		return k.ObserveFailed(ctx, key, w, err)
	}
	wait, err := pending(ctx, sh, k, key, w, obs, now)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("check %s %s's pod writes against the API server: %w", sh.Name, key, err)
	}
	if wait {
		think = sh.Clock.Since(now)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	plan := k.Plan(obs, now)
	think = sh.Clock.Since(now)
	errs := k.Apply(ctx, w, obs, plan)
	if errors.Is(errs.Scale, podcontrol.ErrOwnerGone) {
		// A stale copy of a workload deleted or replaced: no status either; the cache's next
		// event (its deletion, its successor) settles it, or this reconcile again in a second.
		log.FromContext(ctx).Info("not acting for a workload the API server shows gone or being deleted", "reason", errs.Scale.Error())
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	preDownloadErr := SyncPreDownload(ctx, sh, k, w, obs)
	refused, notes := k.Waits(w, plan)
	sh.State.waits.Report(sh.Recorder, w, key, refused, notes)
	return settle(ctx, sh, k, key, w, obs, plan, errs, preDownloadErr, now, &think)
}

// settle computes and writes the status of the workload of key (namespace/name), then returns the apply's errors or when to run again.
func settle[W client.Object, O, P, S any](ctx context.Context, sh Shared, k Kind[W, O, P, S], key string, w W, obs O, plan P, errs Errors,
	preDownloadErr error, now time.Time, think *time.Duration) (ctrl.Result, error) {
	start := sh.Clock.Now()
	status, significant := k.Status(w, obs, errs, now)
	var requeue podcontrol.Requeue
	k.Requeue(w, plan, status, now, &requeue)
	*think += sh.Clock.Since(start)
	wait, err := sh.State.status.Write(ctx, sh.Control, key, w, k.StatusOf(w), status, significant, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	requeue.After(wait) // the held-back counters are written then, if no event comes first
	switch {
	case errs.Scale != nil:
		return ctrl.Result{}, errs.Scale
	case errs.Update != nil:
		return ctrl.Result{}, errs.Update
	case preDownloadErr != nil:
		return ctrl.Result{}, preDownloadErr
	}
	if len(errs.BudgetWaits) > 0 {
		requeue.After(podcontrol.BudgetRetry) // the budget frees as other pods come back
	}
	if errs.Background {
		requeue.After(podcontrol.BackgroundSettle)
	}
	return requeue.Result(), nil
}

// pending reports whether the controller's own pod writes are not in the cache yet (the plan then
// waits); writes still missing after ExpectationTimeout are checked against the API server.
func pending[W client.Object, O, P, S any](ctx context.Context, sh Shared, k Kind[W, O, P, S], key string, w W, obs O, now time.Time) (bool, error) {
	return sh.Expectations.Pending(key, k.Pods(obs), now, ExpectationTimeout, func() (map[string]*corev1.Pod, error) {
		if sh.CacheLag != nil {
			sh.CacheLag(w)
		}
		ctrl.LoggerFrom(ctx).Info("pod writes not in the cache after the expectation timeout; checking them against the API server",
			"timeout", ExpectationTimeout)
		live, err := k.Observe(ctx, w, true)
		if err != nil {
			return nil, err
		}
		return k.Pods(live), nil
	})
}

// SyncPreDownload decides the update revision's image pre-download, or deletes the workload's
// pre-download jobs once the rollout is done, when the kind's gate is on (sh.PreDownload); a
// failure is also a FailedCreateImagePullJob event.
func SyncPreDownload[W client.Object, O, P, S any](ctx context.Context, sh Shared, k Kind[W, O, P, S], w W, obs O) error {
	if !sh.PreDownload {
		return nil
	}
	in, ok := k.PreDownload(w, obs)
	if !ok {
		return nil
	}
	event := func(typ, reason, format string, args ...any) {
		if sh.Recorder != nil {
			sh.Recorder.Eventf(w, nil, typ, reason, reason, format, args...)
		}
	}
	err := predownload.Sync(ctx, sh.Client, in, event)
	if err != nil {
		event(corev1.EventTypeWarning, "FailedCreateImagePullJob", "%v", err)
	}
	return err
}
