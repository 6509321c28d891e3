package podcontrol

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
)

// slowKubelet is an engine whose UpdateAll waits for answer (its batch's kubelets) and then
// reports err for every pod.
type slowKubelet struct {
	engine.Engine
	answer  chan struct{}
	err     error
	unready []string // the pods taken out of service
}

func (e *slowKubelet) UpdateAll(_ context.Context, ups []engine.BatchUpdate, _ int, done func(int, error)) {
	<-e.answer
	for i := range ups {
		done(i, e.err)
	}
}

func (e *slowKubelet) Unready(_ context.Context, pod *corev1.Pod, _ engine.UpdateOptions) (*corev1.Pod, error) {
	e.unready = append(e.unready, pod.Name)
	return pod, nil
}

func (e *slowKubelet) RevisionLabels(rev string) map[string]string {
	return map[string]string{inplace.RevisionLabel: rev}
}

// A reconcile that starts in-place updates returns before their kubelets answer; until the cache
// shows a pod's spec write, the workload reads the pod as it will stand (new revision, Updating,
// out of service), so its next plan counts it as updated and unavailable and never plans it again.
// A write that fails drops the pod's record (the next plan sees the pod as it is) and is the next
// reconcile's error, once; one that finds the pod gone (a scale-in meanwhile) is no failure. Read
// not Ready, it is not counted ready by the workload's status either, which would report a
// rollout done before its last spec writes.
func TestUpdatesRunInTheBackground(t *testing.T) {
	gone := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "web-a")
	for name, writeErr := range map[string]error{"written": nil, "refused": errors.New("refused"), "gone meanwhile": gone} {
		t.Run(name, func(t *testing.T) {
			cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
			// Updated in place once before: the state of that update, whose containers run.
			cached := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-a", UID: "uid-a",
				Labels:      map[string]string{inplace.RevisionLabel: "web-1", "app": "web"},
				Annotations: map[string]string{appspub.InPlaceUpdateStateKey: `{"revision":"web-1","updateTimestamp":"2026-01-01T00:00:00Z"}`}},
				Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
					{Type: corev1.PodReady, Status: corev1.ConditionTrue},
					{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionTrue}}}}
			e := &slowKubelet{answer: make(chan struct{}), err: writeErr}
			now := time.Now()
			rec := events.NewFakeRecorder(10)
			ctl := &Control{Engine: e, Expectations: NewExpectations(), Clock: clocktesting.NewFakePassiveClock(now), Updates: NewUpdates(),
				Recorder: rec}
			o := Owner{Object: cs, Updating: true}
			returned := make(chan error, 1)
			go func() {
				returned <- ctl.UpdateInPlaceAll(context.Background(), o, []Change{{Pod: cached, Held: true, Reason: "template changed",
					Spec: &inplace.UpdateSpec{Revision: "web-2", ContainerImages: map[string]string{"app": "app:v2"}}}}, &Batch{})
			}()
			select {
			case err := <-returned:
				if err != nil {
					t.Fatalf("UpdateInPlaceAll: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("UpdateInPlaceAll waited for the kubelets")
			}
			if wait, _ := ctl.Expectations.Pending("ns/web", map[string]*corev1.Pod{cached.Name: cached}, now, time.Minute, nil); wait {
				t.Error("an update under way holds the plan back")
			}
			read := ctl.Updates.Overlay("ns/web", []*corev1.Pod{cached}, now, time.Minute)
			got := read[0]
			if got == cached || got.Labels[inplace.RevisionLabel] != "web-2" || got.Labels["app"] != "web" ||
				got.Labels[appspub.LifecycleStateKey] != string(appspub.LifecycleStateUpdating) || !inplace.GateFalse(got) ||
				inplace.ConditionIs(got, corev1.PodReady, corev1.ConditionTrue) {
				t.Errorf("read under way: labels %v, gate False %v; want a copy at web-2, Updating, out of service and not Ready", got.Labels, inplace.GateFalse(got))
			}
			// Read with its gate False, the state of the update before would say this one is done,
			// and the gate would open before the containers change.
			if p, _ := inplace.Inspect(got); p != inplace.Updating {
				t.Errorf("read under way, the update is %v, want Updating", p)
			}
			if cached.Labels[inplace.RevisionLabel] != "web-1" || inplace.GateFalse(cached) {
				t.Error("the overlay modified the cache's pod")
			}
			// A newer revision planned meanwhile does not start a second update of the pod.
			if _, err := ctl.ApplyUpdates(context.Background(), o, []Change{{Pod: got, Reason: "template changed again",
				Spec: &inplace.UpdateSpec{Revision: "web-3", ContainerImages: map[string]string{"app": "app:v3"}}}}, nil, &Batch{}); err != nil || len(e.unready) > 0 {
				t.Errorf("a pod under way updated again: err %v, taken out %v", err, e.unready)
			}
			close(e.answer)
			ctl.Updates.Wait()
			want := writeErr
			if writeErr == gone { // nothing left to update: no failure
				want = nil
			}
			err := ctl.Updates.Failed("ns/web")
			if !errors.Is(err, want) || (want == nil) != (err == nil) {
				t.Errorf("Failed = %v, want %v", err, want)
			}
			if again := ctl.Updates.Failed("ns/web"); again != nil {
				t.Errorf("a failure reported twice: %v", again)
			}
			// What the workload's events say: the failure at once, nothing for a pod gone, the
			// update once written.
			wantEvent := map[string]string{"written": "SuccessfulUpdatePodInPlace", "refused": "FailedUpdatePodInPlace", "gone meanwhile": ""}[name]
			var seen []string
			for len(rec.Events) > 0 {
				seen = append(seen, <-rec.Events)
			}
			if wantEvent == "" && len(seen) > 0 || wantEvent != "" && (len(seen) != 1 || !strings.Contains(seen[0], wantEvent)) {
				t.Errorf("events %q, want %q", seen, wantEvent)
			}
			if writeErr != nil {
				if got := ctl.Updates.Overlay("ns/web", []*corev1.Pod{cached}, now, time.Minute)[0]; got != cached {
					t.Error("a pod whose write failed is still read as updated")
				}
				return
			}
			// Written, not in the cache yet: still read as it will stand; once shown, as it is.
			if got := ctl.Updates.Overlay("ns/web", []*corev1.Pod{cached}, now, time.Minute)[0]; got.Labels[inplace.RevisionLabel] != "web-2" {
				t.Error("a write the cache has not shown is forgotten")
			}
			shown := cached.DeepCopy()
			shown.Labels[inplace.RevisionLabel] = "web-2"
			if got := ctl.Updates.Overlay("ns/web", []*corev1.Pod{shown}, now, time.Minute)[0]; got != shown {
				t.Error("a pod the cache shows updated is overlaid")
			}
			if got := ctl.Updates.Overlay("ns/web", []*corev1.Pod{cached}, now, time.Minute)[0]; got != cached {
				t.Error("the record outlived the cache showing the write")
			}
		})
	}
}

// A record whose write the cache never shows is dropped after the timeout (never while its
// update runs), and so is one whose pod was replaced under its name or is gone.
func TestUpdatesOverlayForgets(t *testing.T) {
	now := time.Now()
	pod := func(uid string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-a", UID: types.UID("uid-" + uid),
			Labels: map[string]string{inplace.RevisionLabel: "web-1"}}}
	}
	for name, tc := range map[string]struct {
		read []*corev1.Pod
		at   time.Time
	}{
		"timed out": {read: []*corev1.Pod{pod("a")}, at: now.Add(2 * time.Minute)},
		"replaced":  {read: []*corev1.Pod{pod("b")}, at: now},
		"gone":      {read: nil, at: now},
	} {
		t.Run(name, func(t *testing.T) {
			u := NewUpdates()
			u.start("ns/web", pod("a"), "web-2", engine.UpdateOptions{}, map[string]string{inplace.RevisionLabel: "web-2"}, true)
			u.Overlay("ns/web", tc.read, now.Add(time.Hour), time.Minute)
			if tc.read != nil && tc.read[0].UID == "uid-a" {
				if got := u.Overlay("ns/web", []*corev1.Pod{pod("a")}, now, time.Minute)[0]; got.Labels[inplace.RevisionLabel] != "web-2" {
					t.Fatal("a record dropped while its update runs")
				}
				u.wrote("ns/web", "web-a", now)
			}
			u.Overlay("ns/web", tc.read, tc.at, time.Minute)
			if got := u.Overlay("ns/web", []*corev1.Pod{pod("a")}, now, time.Minute)[0]; got.Labels[inplace.RevisionLabel] != "web-1" {
				t.Error("the record was kept")
			}
		})
	}
}
