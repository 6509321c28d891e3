package workloadloop

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// rendezvous is an engine whose gate openings (Refresh) wait for a take-out (Unready) and whose
// batch update (UpdateAll) waits for an opening: it finishes only if Apply writes them side by
// side.
type rendezvous struct {
	engine.Engine
	takenOut, opened chan string
	openErr          error // what an opening returns
}

func (e *rendezvous) Refresh(ctx context.Context, pod *corev1.Pod, _ engine.Metadata) (inplace.Progress, error) {
	select {
	case <-e.takenOut:
	case <-time.After(5 * time.Second):
	}
	e.opened <- pod.Name
	return inplace.Completed, e.openErr
}

func (e *rendezvous) Unready(_ context.Context, pod *corev1.Pod, _ engine.UpdateOptions) (*corev1.Pod, error) {
	e.takenOut <- pod.Name
	return pod, nil
}

func (e *rendezvous) UpdateAll(_ context.Context, ups []engine.BatchUpdate, _ int, done func(int, error)) {
	select {
	case <-e.opened:
	case <-time.After(5 * time.Second):
	}
	for i := range ups {
		done(i, nil)
	}
}

// A gate opening and another pod's take-out (and its kubelet's wait) are written side by side: an
// opening changes no count the plan bounds, so it does not wait for the take-outs, nor they for it.
// An opening that fails is still the apply's update error.
func TestApplyOpensBesideTheTakeOuts(t *testing.T) {
	for name, openErr := range map[string]error{"opened": nil, "opening refused": errors.New("refused")} {
		t.Run(name, func(t *testing.T) {
			cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
			pod := func(name string) *corev1.Pod {
				return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
			}
			done, next := pod("web-done"), pod("web-next")
			e := &rendezvous{takenOut: make(chan string, 1), opened: make(chan string, 1), openErr: openErr}
			ctl := &podcontrol.Control{Engine: e, Expectations: podcontrol.NewExpectations(), Clock: clocktesting.NewFakePassiveClock(time.Now())}
			start := time.Now()
			errs := Apply(context.Background(), cs, Writes{Control: ctl, Owner: podcontrol.Owner{Object: cs},
				Pods:     map[string]*corev1.Pod{done.Name: done, next.Name: next},
				InFlight: podcontrol.InFlight{Completed: []string{done.Name}},
				Updates: []podcontrol.Change{{Pod: next, Reason: "template changed",
					Spec: &inplace.UpdateSpec{Revision: "web-2", ContainerImages: map[string]string{"app": "app:v2"}}}}})
			if errs.Scale != nil || !errors.Is(errs.Update, openErr) || (openErr == nil && errs.Update != nil) {
				t.Fatalf("errors %+v, want the update error %v", errs, openErr)
			}
			if took := time.Since(start); took > 4*time.Second {
				t.Errorf("apply took %v: the opening and the take-out waited for each other", took)
			}
		})
	}
}

// Split keeps every step's pods, in order, and puts each pod on one side.
func TestInFlightSplit(t *testing.T) {
	f := podcontrol.InFlight{Completed: []string{"a", "b"}, Batches: []string{"c"}, Recreates: []string{"d"}, Resumes: []string{"e", "f"}}
	first, beside := f.Split(func(name string) bool { return name == "b" || name == "e" })
	if len(first.Completed) != 1 || first.Completed[0] != "b" || len(first.Resumes) != 1 || first.Resumes[0] != "e" ||
		len(first.Batches)+len(first.Recreates) != 0 {
		t.Errorf("first %+v", first)
	}
	if len(beside.Completed) != 1 || beside.Completed[0] != "a" || len(beside.Batches) != 1 || len(beside.Recreates) != 1 ||
		len(beside.Resumes) != 1 || beside.Resumes[0] != "f" {
		t.Errorf("beside %+v", beside)
	}
}

// blocked is an engine whose UpdateAll waits for release, then fails every update with err.
type blocked struct {
	engine.Engine
	release chan struct{}
	err     error
}

func (e *blocked) Unready(_ context.Context, pod *corev1.Pod, _ engine.UpdateOptions) (*corev1.Pod, error) {
	return pod, nil
}

func (e *blocked) UpdateAll(_ context.Context, ups []engine.BatchUpdate, _ int, done func(int, error)) {
	<-e.release
	for i := range ups {
		done(i, e.err)
	}
}

func (e *blocked) RevisionLabels(rev string) map[string]string {
	return map[string]string{inplace.RevisionLabel: rev}
}

// With podcontrol.Updates, an apply returns once its in-place updates are started (Background:
// the workload runs again to report them), and a failure of theirs is the next apply's update
// error.
func TestApplyLeavesUpdatesToTheBackground(t *testing.T) {
	cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-a", UID: "uid-a"}}
	refused := errors.New("refused")
	e := &blocked{release: make(chan struct{}), err: refused}
	ctl := &podcontrol.Control{Engine: e, Expectations: podcontrol.NewExpectations(), Clock: clocktesting.NewFakePassiveClock(time.Now()),
		Updates: podcontrol.NewUpdates()}
	w := Writes{Control: ctl, Owner: podcontrol.Owner{Object: cs}, Pods: map[string]*corev1.Pod{pod.Name: pod},
		Updates: []podcontrol.Change{{Pod: pod, Reason: "template changed",
			Spec: &inplace.UpdateSpec{Revision: "web-2", ContainerImages: map[string]string{"app": "app:v2"}}}}}
	applied := make(chan Errors, 1)
	go func() { applied <- Apply(context.Background(), cs, w) }()
	select {
	case errs := <-applied:
		if !errs.Background || errs.Update != nil {
			t.Errorf("errors %+v, want Background and no error yet", errs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("apply waited for its updates")
	}
	close(e.release)
	ctl.Updates.Wait()
	errs := Apply(context.Background(), cs, Writes{Control: ctl, Owner: podcontrol.Owner{Object: cs}, Pods: w.Pods})
	if !errors.Is(errs.Update, refused) || errs.Background {
		t.Errorf("the next apply: %+v, want the refusal and nothing in the background", errs)
	}
}
