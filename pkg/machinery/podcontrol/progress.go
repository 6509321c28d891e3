package podcontrol

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/holders"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
	"github.com/kruise-ng/kruise/pkg/core/podgate"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/rolloutmetrics"
)

// InFlight are a workload's pods whose in-place updates need the engine's next step, by name.
type InFlight struct {
	// Completed: the update has finished; the gate turns True.
	Completed []string
	// Batches: the next launch-priority batch of containers is due.
	Batches []string
	// Recreates: containers wait for kruise-daemon to restart them for their env.
	Recreates []string
	// Resumes: a deferred update whose grace period is over is applied.
	Resumes []string
}

// Add files pod under the step its progress (inplace.Inspect) calls for.
func (f *InFlight) Add(pod string, p inplace.Progress, recreate []string) {
	switch p {
	case inplace.Completed:
		f.Completed = append(f.Completed, pod)
	case inplace.BatchDone:
		f.Batches = append(f.Batches, pod)
	case inplace.Updating:
		if len(recreate) > 0 {
			f.Recreates = append(f.Recreates, pod)
		}
	}
}

// Split divides f by pod: first has the pods in (in), beside the others.
func (f InFlight) Split(in func(pod string) bool) (first, beside InFlight) {
	split := func(names []string) (a, b []string) {
		for _, n := range names {
			if in(n) {
				a = append(a, n)
			} else {
				b = append(b, n)
			}
		}
		return a, b
	}
	first.Completed, beside.Completed = split(f.Completed)
	first.Batches, beside.Batches = split(f.Batches)
	first.Recreates, beside.Recreates = split(f.Recreates)
	first.Resumes, beside.Resumes = split(f.Resumes)
	return first, beside
}

// Progress moves the in-flight updates on through the engine's Refresh. pods are the workload's
// pods by name as observed.
func (c *Control) Progress(ctx context.Context, o Owner, pods map[string]*corev1.Pod, f InFlight) error {
	key := o.Key()
	var opens []string
	for _, name := range f.Completed {
		if !c.Expectations.Opening(key, pods[name]) { // opened already; the cache is behind
			opens = append(opens, name)
		}
	}
	now := c.Clock.Now()
	refresh := func(name string, expect func()) error {
		if expect != nil {
			expect()
		}
		if _, err := c.Engine.Refresh(ctx, pods[name], afterUpdate(o, pods[name], now)); err != nil {
			if expect != nil {
				c.Expectations.Drop(key, name)
			}
			return err
		}
		return nil
	}
	err := Parallel(opens, func(name string) error {
		return refresh(name, func() { c.Expectations.ExpectOpen(key, pods[name], now) })
	})
	err = errors.Join(err, Parallel(f.Batches, func(name string) error {
		state := pods[name].Annotations[appspub.InPlaceUpdateStateKey]
		return refresh(name, func() { c.Expectations.ExpectBatch(key, name, state, now) })
	}))
	err = errors.Join(err, Parallel(f.Recreates, func(name string) error {
		return refresh(name, nil) // makes sure a ContainerRecreateRequest exists
	}))
	return errors.Join(err, Parallel(f.Resumes, func(name string) error {
		if err := refresh(name, func() { c.Expectations.ExpectResume(key, name, now) }); err != nil {
			c.Event(o, corev1.EventTypeWarning, "FailedUpdatePodInPlace", "apply the deferred in-place update of pod %s: %v", name, err)
			return err
		}
		return nil
	}))
}

// Reupdate settles the pods whose in-place update has completed (f.Completed: the gate still
// closed) and which changes update in place again. Opened and taken out again in one reconcile, a
// pod would leave its kubelet's Ready False from the update before standing as the answer to the
// new take-out, while the kubelet, having seen the gate open, may still report it Ready once its
// containers change. So such a pod is not opened: it stays out of service (Change.Held) and goes
// straight on to its next update, two writes fewer. A pod opened by an earlier reconcile that the
// cache does not show open yet is not updated by this one: the cache's event brings the next.
func (c *Control) Reupdate(key string, pods map[string]*corev1.Pod, f InFlight, changes []Change) (InFlight, []Change) {
	completed := map[string]bool{}
	for _, name := range f.Completed {
		completed[name] = true
	}
	var kept []Change
	for _, ch := range changes {
		if ch.Spec == nil || ch.Pod == nil || !completed[ch.Pod.Name] {
			kept = append(kept, ch)
			continue
		}
		if c.Expectations.Opening(key, pods[ch.Pod.Name]) {
			continue
		}
		delete(completed, ch.Pod.Name)
		ch.Held = true
		kept = append(kept, ch)
	}
	f.Completed = slices.DeleteFunc(slices.Clone(f.Completed), func(name string) bool { return !completed[name] })
	return f, kept
}

// afterUpdate is the lifecycle state a pod in Updating moves to in the write that ends its
// in-place update (as OpenKruise moves it once the update is done): Updated while the
// inPlaceUpdate hook is not satisfied, Normal otherwise. A pod in any other state keeps it.
func afterUpdate(o Owner, pod *corev1.Pod, now time.Time) engine.Metadata {
	if pod == nil || lifecycle.State(pod) != appspub.LifecycleStateUpdating {
		return engine.Metadata{}
	}
	to := lifecycle.AfterUpdate(lifecycle.Released(lifecycle.Hooks(o.Lifecycle).InPlaceUpdate, pod))
	labels, annotations := lifecycle.Metadata(to, now)
	return engine.Metadata{Labels: labels, Annotations: annotations}
}

// Pending is one planned in-place update, for Unready.
type Pending struct {
	Pod    *corev1.Pod
	Spec   *inplace.UpdateSpec
	Reason string
}

// Unready takes the pods whose containers the updates change in place out of their Services, all
// of them before any is updated: the engine changes a pod's containers only once its kubelet has
// seen the gate, and by then most have. It returns the pods it held, as they now stand, and the
// pods a PodUnavailableBudget held back (engine.BudgetError): those are left as they were.
func (c *Control) Unready(ctx context.Context, o Owner, updates []Pending) (held map[string]*corev1.Pod, waiting []string, err error) {
	var mu sync.Mutex
	held = map[string]*corev1.Pod{}
	err = Parallel(updates, func(u Pending) error {
		if u.Pod == nil || u.Spec == nil || !u.Spec.RestartsContainers() {
			return nil
		}
		h, err := c.Engine.Unready(ctx, u.Pod, engine.UpdateOptions{Reason: u.Reason, GraceSeconds: o.GraceSeconds})
		var budget *engine.BudgetError
		switch {
		case errors.As(err, &budget):
			mu.Lock()
			waiting = append(waiting, u.Pod.Name)
			mu.Unlock()
			return nil
		case err != nil:
			c.Event(o, corev1.EventTypeWarning, "FailedUpdatePodInPlace", "take pod %s out of service for its in-place update: %v", u.Pod.Name, err)
			return err
		}
		mu.Lock()
		held[u.Pod.Name] = h
		mu.Unlock()
		return nil
	})
	slices.Sort(waiting)
	return held, waiting, err
}

// MoveLifecycle puts pod in lifecycle state to, then holds it NotReady (KruisePodReady False) when
// markNotReady asks for it. The state goes first: the pod readiness controller keeps the condition
// False only for a pod in a hook's state.
func (c *Control) MoveLifecycle(ctx context.Context, o Owner, pod *corev1.Pod, to appspub.LifecycleStateType, markNotReady bool, reason string, done *Batch) error {
	if pod == nil {
		return nil
	}
	now := c.Clock.Now()
	patch, err := lifecycle.Patch(to, now)
	if err != nil {
		return err
	}
	key := o.Key()
	c.Expectations.ExpectLifecycle(key, pod.Name, string(to), now)
	if err := c.Client.Patch(ctx, engine.Ref(pod), client.RawPatch(types.MergePatchType, patch)); err != nil {
		c.Expectations.Drop(key, pod.Name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		c.Event(o, corev1.EventTypeWarning, "FailedLifecycle", "move pod %s to %s: %v", pod.Name, to, err)
		return fmt.Errorf("move pod %s to lifecycle state %s: %w", pod.Name, to, err)
	}
	done.Add("Lifecycle"+string(to), "moved to "+string(to), pod.Name, reason)
	if !markNotReady || !podgate.HasKruisePodReady(pod) {
		return nil
	}
	h, ok := holders.LifecycleHook(to)
	if !ok {
		return nil
	}
	// The holder joins whatever else holds the pod (pkg/core/holders); the pod readiness controller
	// drops it once the pod has left the hook's state.
	patch, err = inplace.ConditionPatch(appspub.KruisePodReadyConditionType, corev1.ConditionFalse, "",
		holders.Format(holders.With(holders.Of(pod), h)), now)
	if err != nil {
		return err
	}
	if err := c.Client.Status().Patch(ctx, engine.Ref(pod), client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

// Change is one planned update of a pod: in place to Spec, or, with Spec nil, by recreating it
// (the pod is deleted; its workload creates it again).
type Change struct {
	Pod    *corev1.Pod
	Spec   *inplace.UpdateSpec
	Reason string
	// Held: Pod is out of service for this change already, as it stands: this reconcile took it
	// out (Unready), or it never came back from its update before (Reupdate).
	Held bool
}

// ApplyUpdates carries out changes: first every in-place change's pod is taken out of service
// (Unready), then the in-place changes are made together (UpdateInPlaceAll: one wait for their
// kubelets) beside the recreates, in parallel; recreate deletes a pod to recreate (the
// workload's own deletion, which may take its claims along). It returns the pods whose in-place
// update a PodUnavailableBudget held back (and an event says so): they are left as they were, and
// the workload tries again after BudgetRetry — a rollout never takes a guarded application below
// its budget. A pod whose in-place update runs on in the background (Updates) is not updated again
// until the cache shows it.
func (c *Control) ApplyUpdates(ctx context.Context, o Owner, changes []Change, recreate func(pod *corev1.Pod, reason string) error, done *Batch) (waiting []string, err error) {
	if c.Updates != nil { // never two in-place updates of one pod at once
		changes = slices.DeleteFunc(slices.Clone(changes), func(ch Change) bool {
			return ch.Spec != nil && ch.Pod != nil && c.Updates.underWay(o.Key(), ch.Pod)
		})
	}
	var pending []Pending
	for _, ch := range changes {
		if ch.Spec != nil && !ch.Held {
			pending = append(pending, Pending{Pod: ch.Pod, Spec: ch.Spec, Reason: ch.Reason})
		}
	}
	held, waiting, err := c.Unready(ctx, o, pending)
	if len(waiting) > 0 {
		c.Event(o, corev1.EventTypeNormal, ReasonWaitingForBudget, "%d pod(s) wait for their PodUnavailableBudget before their in-place update: %s",
			len(waiting), ListNames(waiting, 5))
	}
	var inPlace, recreates []Change
	for _, ch := range changes {
		switch {
		case ch.Spec == nil:
			recreates = append(recreates, ch)
		case ch.Pod == nil || slices.Contains(waiting, ch.Pod.Name):
		default:
			if h := held[ch.Pod.Name]; h != nil {
				ch.Pod, ch.Held = h, true
			}
			inPlace = append(inPlace, ch)
		}
	}
	var recreated error
	var wg sync.WaitGroup
	wg.Go(func() {
		recreated = Parallel(recreates, func(ch Change) error {
			err := recreate(ch.Pod, ch.Reason)
			if err == nil {
				o.Metrics.PodUpdated(rolloutmetrics.Recreate)
			}
			return err
		})
	})
	updated := c.UpdateInPlaceAll(ctx, o, inPlace, done)
	wg.Wait()
	return waiting, errors.Join(err, recreated, updated)
}

// ReasonWaitingForBudget is the event of updates a PodUnavailableBudget holds back.
const ReasonWaitingForBudget = "WaitingForPodUnavailableBudget"

// BudgetRetry is how soon a workload whose updates a PodUnavailableBudget held back tries again.
const BudgetRetry = 2 * time.Second
