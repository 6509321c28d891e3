package workloadloop

import (
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// Errors are the errors of one apply, by kind: Scale for creates and deletes (condition
// FailedCreate/FailedDelete in OpenKruise's words), Update for updates.
type Errors struct {
	// Scale is the error of creating or deleting pods (and claims).
	Scale error
	// Update is the error of updating pods in place or by recreate.
	Update error
	// BudgetWaits are the pods whose in-place update a PodUnavailableBudget held back (no error).
	BudgetWaits []string
	// Background: in-place updates were left to finish in the background (podcontrol.Updates);
	// the workload runs again once they must have, to report and retry any that failed.
	Background bool
}

// Deletion is a pod the plan deletes, and why.
type Deletion struct{ Pod, Reason string }

// Writes are one reconcile's writes for Apply. The steps a kind does not have stay nil.
type Writes struct {
	Control *podcontrol.Control
	Owner   podcontrol.Owner
	// NewRevision is the update revision to record first (nil: it exists); Revisions, the
	// observed ones, gain it.
	NewRevision *revision.Decision
	Revisions   map[string]*appsv1.ControllerRevision
	// Adopt are the orphans to adopt before any plan acts on them; Release, the pods to let go
	// after it.
	Adopt, Release []*corev1.Pod
	// AdoptsLater: the kind adopts orphans itself in a later step (Finish); like Adopt, the
	// workload is checked live (Control.OwnerLive) before any write.
	AdoptsLater bool
	// Pods are the observed pods by name; InFlight their in-place updates the engine moves on.
	Pods     map[string]*corev1.Pod
	InFlight podcontrol.InFlight
	// Lifecycle are the planned lifecycle moves.
	Lifecycle []lifecycle.Move
	// Claims writes the claims before pods are deleted (a Scale step).
	Claims func(done *podcontrol.Batch) error
	// Deletes are the planned deletions; Delete deletes one (nil: Control.Delete with
	// podcontrol.Deleted).
	Deletes []Deletion
	Delete  func(pod *corev1.Pod, ev podcontrol.Deletion, why string, done *podcontrol.Batch) error
	// Expand grows the claims of pods (an Update step).
	Expand func(done *podcontrol.Batch) error
	// Updates are the planned in-place or recreating updates; a recreate deletes the pod with
	// RecreateEvent (zero: podcontrol.DeletedToRecreate).
	Updates       []podcontrol.Change
	RecreateEvent podcontrol.Deletion
	// Create creates the planned pods (a Scale step).
	Create func(done *podcontrol.Batch) error
	// Finish is the kind's last Scale step, after the release.
	Finish func(done *podcontrol.Batch) error
	// Prune deletes the revisions no longer kept.
	Prune func()
}

// Apply carries out a plan in the one order every workload writes in, through podcontrol, and
// flushes one event per kind of successful write onto obj.
func Apply(ctx context.Context, obj client.Object, w Writes) Errors {
	ctl, o := w.Control, w.Owner
	var errs Errors
	if len(w.Adopt) > 0 || w.AdoptsLater { // orphans: maybe this workload's own, left by its deletion (Control.OwnerLive)
		if err := ctl.OwnerLive(ctx, o); err != nil {
			errs.Scale = err
			return errs
		}
	}
	if rev, err := ctl.ApplyRevision(ctx, w.NewRevision); err != nil {
		errs.Update = err
		return errs
	} else if rev != nil {
		w.Revisions[rev.Name] = rev
	}
	if ctl.Updates != nil { // what failed in the background since the last reconcile is this one's to report
		errs.Update = ctl.Updates.Failed(o.Key())
	}
	done := &podcontrol.Batch{}
	defer done.Flush(ctl.Recorder, obj)
	if err := ctl.Adopt(ctx, o, w.Adopt, done); err != nil { // before any plan acts on them
		errs.Scale = err
		return errs
	}
	inFlight, updates := ctl.Reupdate(o.Key(), w.Pods, w.InFlight, w.Updates)
	// The in-flight updates of pods no other step writes move on beside the steps below: a gate
	// opening or a next container batch need not wait for this reconcile's take-outs and their
	// kubelets, nor those for the openings (an opening changes no count the plan bounds). The
	// pods another step writes move on first, as before.
	first, beside := inFlight.Split(touched(w, updates))
	errs.Update = errors.Join(errs.Update, ctl.Progress(ctx, o, w.Pods, first))
	besideErr := make(chan error, 1)
	go func() { besideErr <- ctl.Progress(ctx, o, w.Pods, beside) }()
	errs.Update = errors.Join(errs.Update, podcontrol.Parallel(w.Lifecycle, func(m lifecycle.Move) error {
		return ctl.MoveLifecycle(ctx, o, w.Pods[m.Pod], m.To, m.MarkNotReady, m.Reason, done)
	}))
	errs.Scale = step(w.Claims, done)
	del := w.Delete
	if del == nil {
		del = func(pod *corev1.Pod, ev podcontrol.Deletion, why string, done *podcontrol.Batch) error {
			return ctl.Delete(ctx, o, pod, ev, why, done)
		}
	}
	errs.Scale = errors.Join(errs.Scale, podcontrol.Parallel(w.Deletes, func(d Deletion) error {
		return del(w.Pods[d.Pod], podcontrol.Deleted, d.Reason, done)
	}))
	errs.Update = errors.Join(errs.Update, step(w.Expand, done))
	recreate := w.RecreateEvent
	if recreate == (podcontrol.Deletion{}) {
		recreate = podcontrol.DeletedToRecreate
	}
	waiting, err := ctl.ApplyUpdates(ctx, o, updates, func(pod *corev1.Pod, why string) error {
		return del(pod, recreate, why, done)
	}, done)
	errs.Update, errs.BudgetWaits = errors.Join(errs.Update, err), waiting
	errs.Background = ctl.Updates != nil && slices.ContainsFunc(updates, func(ch podcontrol.Change) bool { return ch.Spec != nil })
	errs.Scale = errors.Join(errs.Scale, step(w.Create, done))
	errs.Scale = errors.Join(errs.Scale, ctl.Release(ctx, o, w.Release, done), step(w.Finish, done))
	errs.Update = errors.Join(errs.Update, <-besideErr)
	if w.Prune != nil {
		w.Prune()
	}
	return errs
}

// touched reports whether a step of w other than Progress writes the pod named (updates are
// w's updates as Reupdate kept them).
func touched(w Writes, updates []podcontrol.Change) func(string) bool {
	names := map[string]bool{}
	for _, ch := range updates {
		if ch.Pod != nil {
			names[ch.Pod.Name] = true
		}
	}
	for _, m := range w.Lifecycle {
		names[m.Pod] = true
	}
	for _, d := range w.Deletes {
		names[d.Pod] = true
	}
	for _, p := range w.Release {
		names[p.Name] = true
	}
	return func(name string) bool { return names[name] }
}

func step(f func(*podcontrol.Batch) error, done *podcontrol.Batch) error {
	if f == nil {
		return nil
	}
	return f(done)
}

// NewPod is a pod of the revision named name among revisions: its template's metadata and spec,
// copied. The kind names it and adds its identity.
func NewPod(revisions map[string]*appsv1.ControllerRevision, name string) (*corev1.Pod, error) {
	rev := revisions[name]
	if rev == nil {
		return nil, fmt.Errorf("revision %s of a new pod not found", name)
	}
	tmpl, err := revision.TemplateOf(rev)
	if err != nil {
		return nil, err
	}
	return &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}, nil
}
