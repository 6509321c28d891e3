package ephemeraljob

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func TestTargets(t *testing.T) {
	job := newJob(withParallelism(10))
	terminating := newPod(1)
	terminating.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
	pending := newPod(2)
	pending.Status.Phase = corev1.PodPending
	ended := newPod(3)
	ended.Status.Phase = corev1.PodSucceeded
	foreign := newPod(4)
	foreign.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "x"}}}
	sameName := newPod(5)
	sameName.Spec.Containers = append(sameName.Spec.Containers, corev1.Container{Name: "debug"})
	otherJob := injectInto(newJob(func(j *v1alpha1.EphemeralJob) { j.UID = "other" }), newPod(6))
	plan := Compute(Snapshot{Job: job, Pods: []*corev1.Pod{newPod(9), terminating, pending, ended, foreign, sameName, otherJob, newPod(7)}}, t0)
	if got, want := podNames(plan.Inject), []string{"p7", "p9"}; !reflect.DeepEqual(got, want) {
		t.Errorf("injected %v, want %v (Running, not being deleted, no conflict, oldest first)", got, want)
	}
	if plan.Status.Matches != 2 || plan.Status.Waiting != 2 {
		t.Errorf("match %d waiting %d, want 2 and 2", plan.Status.Matches, plan.Status.Waiting)
	}
	var conflicts []string
	for _, c := range plan.Conflicts {
		conflicts = append(conflicts, c.String())
	}
	if len(conflicts) != 3 || !strings.Contains(conflicts[0], "p4 already has a ephemeral container named debug") ||
		!strings.Contains(conflicts[1], "p5 already has a container named debug") || !strings.Contains(conflicts[2], "p6") {
		t.Errorf("conflicts %q, want p4 (foreign ephemeral), p5 (container), p6 (another job's)", conflicts)
	}
}

func TestReplicasKeepInjectedPods(t *testing.T) {
	job := newJob(withReplicas(2), withParallelism(5))
	// p5 is the newest but already injected: it stays a target, and only one older pod joins it.
	plan := Compute(Snapshot{Job: job, Pods: []*corev1.Pod{newPod(1), newPod(2), newPod(3), withState(injectInto(job, newPod(5)), "debug", running())}}, t0)
	if got := podNames(plan.Inject); !reflect.DeepEqual(got, []string{"p1"}) {
		t.Errorf("injected %v, want [p1]", got)
	}
	if plan.Status.Matches != 2 || plan.Status.Running != 1 || plan.Status.Waiting != 1 {
		t.Errorf("status %+v, want match 2, running 1, waiting 1", plan.Status)
	}
	zero := Compute(Snapshot{Job: newJob(withReplicas(0)), Pods: []*corev1.Pod{newPod(1)}}, t0)
	if len(zero.Inject) != 0 || zero.Status.Phase != v1alpha1.EphemeralJobWaiting || condition(zero.Status, v1alpha1.EphemeralJobMatchedEmpty) == nil {
		t.Errorf("replicas 0: inject %v, status %+v; want nothing, Waiting, MatchedEmpty", podNames(zero.Inject), zero.Status)
	}
}

func TestParallelism(t *testing.T) {
	for _, tc := range []struct {
		name        string
		parallelism *int32
		pods        func(job *v1alpha1.EphemeralJob) []*corev1.Pod
		want        []string
	}{
		{"unset is 1", nil, func(*v1alpha1.EphemeralJob) []*corev1.Pod { return []*corev1.Pod{newPod(1), newPod(2)} }, []string{"p1"}},
		{"2 of 3", ptr.To[int32](2), func(*v1alpha1.EphemeralJob) []*corev1.Pod { return []*corev1.Pod{newPod(1), newPod(2), newPod(3)} }, []string{"p1", "p2"}},
		{"a running pod takes a place", ptr.To[int32](2), func(j *v1alpha1.EphemeralJob) []*corev1.Pod {
			return []*corev1.Pod{withState(injectInto(j, newPod(1)), "debug", running()), newPod(2), newPod(3)}
		}, []string{"p2"}},
		{"an injected pod not started takes a place", ptr.To[int32](1), func(j *v1alpha1.EphemeralJob) []*corev1.Pod {
			return []*corev1.Pod{injectInto(j, newPod(1)), newPod(2)}
		}, nil},
		{"ended pods free their places", ptr.To[int32](1), func(j *v1alpha1.EphemeralJob) []*corev1.Pod {
			return []*corev1.Pod{withState(injectInto(j, newPod(1)), "debug", exited(0)), withState(injectInto(j, newPod(2)), "debug", exited(3)), newPod(3)}
		}, []string{"p3"}},
		{"0 injects nothing", ptr.To[int32](0), func(*v1alpha1.EphemeralJob) []*corev1.Pod { return []*corev1.Pod{newPod(1)} }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := newJob()
			job.Spec.Parallelism = tc.parallelism
			plan := Compute(Snapshot{Job: job, Pods: tc.pods(job)}, t0)
			if got := podNames(plan.Inject); len(got) != len(tc.want) || (len(got) > 0 && !reflect.DeepEqual(got, tc.want)) {
				t.Errorf("injected %v, want %v (%s)", got, tc.want, plan.Note)
			}
		})
	}
}

func TestPendingInjectionTakesAPlace(t *testing.T) {
	job := newJob()
	pods := []*corev1.Pod{newPod(1), newPod(2)}
	plan := Compute(Snapshot{Job: job, Pods: pods, Pending: sets.New[types.UID]("uid-1")}, t0)
	if len(plan.Inject) != 0 {
		t.Errorf("injected %v while p1's injection is not in the cache yet, want nothing", podNames(plan.Inject))
	}
}

func TestPaused(t *testing.T) {
	job := newJob(func(j *v1alpha1.EphemeralJob) { j.Spec.Paused = true; j.Spec.ActiveDeadlineSeconds = ptr.To[int64](5) }, started(t0))
	plan := Compute(Snapshot{Job: job, Pods: []*corev1.Pod{newPod(1)}}, t0.Add(time.Minute))
	if len(plan.Inject) != 0 || plan.Status.Phase != v1alpha1.EphemeralJobPause || plan.Status.CompletionTime != nil {
		t.Errorf("paused: inject %v, phase %s, completion %v; want nothing, Paused, unset (a paused job does not time out, as in OpenKruise)",
			podNames(plan.Inject), plan.Status.Phase, plan.Status.CompletionTime)
	}
	job.Spec.Paused = false
	plan = Compute(Snapshot{Job: job, Pods: []*corev1.Pod{newPod(1)}}, t0.Add(time.Second))
	if podNames(plan.Inject)[0] != "p1" || plan.Status.Phase != v1alpha1.EphemeralJobWaiting {
		t.Errorf("resumed: inject %v, phase %s; want p1, Waiting", podNames(plan.Inject), plan.Status.Phase)
	}
}

func TestDeadline(t *testing.T) {
	job := newJob(func(j *v1alpha1.EphemeralJob) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](5) })
	pod := withState(injectInto(job, newPod(1)), "debug", running())
	first := Compute(Snapshot{Job: job, Pods: []*corev1.Pod{pod, newPod(2)}}, t0)
	if first.Status.StartTime == nil || !first.Status.StartTime.Time.Equal(t0) || first.RequeueAfter != 5*time.Second {
		t.Errorf("first plan: start %v, requeue %v; want %v and 5s", first.Status.StartTime, first.RequeueAfter, t0)
	}
	job.Status = first.Status
	before := Compute(Snapshot{Job: job, Pods: []*corev1.Pod{pod, newPod(2)}}, t0.Add(4*time.Second))
	if before.Status.Phase != v1alpha1.EphemeralJobRunning || before.RequeueAfter != time.Second {
		t.Errorf("before the deadline: phase %s, requeue %v; want Running, 1s", before.Status.Phase, before.RequeueAfter)
	}
	after := Compute(Snapshot{Job: job, Pods: []*corev1.Pod{pod, newPod(2)}}, t0.Add(5*time.Second))
	c := condition(after.Status, v1alpha1.EphemeralJobFailure)
	if after.Status.Phase != v1alpha1.EphemeralJobFailed || after.Status.CompletionTime == nil || c == nil || c.Reason != ReasonDeadlineExceeded ||
		c.Message != "EphemeralJob ns/ej was active longer than specified deadline" || len(after.Inject) != 0 || after.Finished == nil {
		t.Errorf("at the deadline: %+v, inject %v; want Failed, completed, JobFailed DeadlineExceeded, nothing injected", after.Status, podNames(after.Inject))
	}
}

func TestOutcomes(t *testing.T) {
	job := newJob(withParallelism(3))
	for _, tc := range []struct {
		name    string
		states  []corev1.ContainerState
		phase   v1alpha1.EphemeralJobPhase
		cond    v1alpha1.EphemeralJobConditionType
		reason  string
		message string
	}{
		{"all succeed", []corev1.ContainerState{exited(0), exited(0)}, v1alpha1.EphemeralJobSucceeded, v1alpha1.EphemeralJobSucceed, ReasonSucceeded, "job success to run all tasks"},
		{"all fail", []corev1.ContainerState{exited(1), waiting("RunContainerError")}, v1alpha1.EphemeralJobFailed, v1alpha1.EphemeralJobFailure, ReasonFailed, "job failed to run all tasks, 2/2 pods failed"},
		{"mixed (B1: OpenKruise stays Unknown)", []corev1.ContainerState{exited(0), exited(2), exited(0)}, v1alpha1.EphemeralJobFailed, v1alpha1.EphemeralJobFailure, ReasonFailed,
			"job finished with mixed outcomes: 2/3 pods succeeded, 1/3 pods failed"},
		{"one failed, one running", []corev1.ContainerState{exited(2), running()}, v1alpha1.EphemeralJobRunning, v1alpha1.EphemeralJobFailure, ReasonContainerFailed,
			"1/2 pods have a failed ephemeral container"},
		{"one succeeded, one waiting", []corev1.ContainerState{exited(0), waiting("ContainerCreating")}, v1alpha1.EphemeralJobWaiting, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pods []*corev1.Pod
			for i, s := range tc.states {
				pods = append(pods, withState(injectInto(job, newPod(i)), "debug", s))
			}
			plan := Compute(Snapshot{Job: job, Pods: pods}, t0)
			if plan.Status.Phase != tc.phase {
				t.Fatalf("phase %s, want %s (%+v)", plan.Status.Phase, tc.phase, plan.Status)
			}
			finished := tc.phase == v1alpha1.EphemeralJobSucceeded || tc.phase == v1alpha1.EphemeralJobFailed
			if (plan.Status.CompletionTime != nil) != finished || (plan.Finished != nil) != finished {
				t.Errorf("completion %v, finished %v; want finished %v", plan.Status.CompletionTime, plan.Finished, finished)
			}
			if finished && plan.RequeueAfter != DefaultTTL {
				t.Errorf("requeue %v, want the TTL %v", plan.RequeueAfter, DefaultTTL)
			}
			if tc.cond == "" {
				return
			}
			if c := condition(plan.Status, tc.cond); c == nil || c.Status != corev1.ConditionTrue || c.Reason != tc.reason || c.Message != tc.message {
				t.Errorf("condition %s: %+v, want True %s %q", tc.cond, c, tc.reason, tc.message)
			}
		})
	}
}

func TestTTL(t *testing.T) {
	done := metav1.NewTime(t0)
	job := newJob(func(j *v1alpha1.EphemeralJob) {
		j.Status.CompletionTime = &done
		j.Status.Phase = v1alpha1.EphemeralJobSucceeded
	})
	if p := Compute(Snapshot{Job: job, Pods: []*corev1.Pod{newPod(1)}}, t0.Add(time.Minute)); p.Delete || p.RequeueAfter != DefaultTTL-time.Minute || len(p.Inject) != 0 {
		t.Errorf("unset TTL, a minute after finishing: delete %v, requeue %v, inject %v; want no, 29m, nothing", p.Delete, p.RequeueAfter, podNames(p.Inject))
	}
	job.Spec.TTLSecondsAfterFinished = ptr.To[int32](10)
	if p := Compute(Snapshot{Job: job}, t0.Add(9*time.Second)); p.Delete || p.RequeueAfter != time.Second {
		t.Errorf("TTL 10s, 9s after: delete %v, requeue %v; want no, 1s", p.Delete, p.RequeueAfter)
	}
	if p := Compute(Snapshot{Job: job}, t0.Add(10*time.Second)); !p.Delete || !equality.Semantic.DeepEqual(p.Status, job.Status) {
		t.Errorf("TTL 10s, 10s after: delete %v; want delete, status untouched", p.Delete)
	}
}

func TestStateOf(t *testing.T) {
	two := sets.New("a", "b")
	pod := func(states map[string]corev1.ContainerState) *corev1.Pod {
		p := newPod(1)
		for _, n := range []string{"a", "b", "other"} {
			if s, ok := states[n]; ok {
				withState(p, n, s)
			}
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		states map[string]corev1.ContainerState
		want   PodState
	}{
		{"no status yet", nil, PodWaiting},
		{"both exited 0", map[string]corev1.ContainerState{"a": exited(0), "b": exited(0)}, PodSucceeded},
		{"one exited 0, one not started", map[string]corev1.ContainerState{"a": exited(0)}, PodWaiting},
		{"one exited 0, one running", map[string]corev1.ContainerState{"a": exited(0), "b": running()}, PodRunning},
		{"one failed, one running", map[string]corev1.ContainerState{"a": exited(137), "b": running()}, PodFailed},
		{"RunContainerError fails", map[string]corev1.ContainerState{"a": waiting("RunContainerError")}, PodFailed},
		{"image pull waits", map[string]corev1.ContainerState{"a": waiting("ErrImagePull")}, PodWaiting},
		{"other containers do not count", map[string]corev1.ContainerState{"other": exited(1), "a": exited(0), "b": exited(0)}, PodSucceeded},
	} {
		if got := StateOf(two, pod(tc.states)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The status of an unchanged job compares equal, so that it is not written again.
func TestStatusStable(t *testing.T) {
	job := newJob(withParallelism(2))
	pods := []*corev1.Pod{withState(injectInto(job, newPod(1)), "debug", running()), withState(injectInto(job, newPod(2)), "debug", exited(4))}
	first := Compute(Snapshot{Job: job, Pods: pods}, t0)
	job.Status = first.Status
	second := Compute(Snapshot{Job: job, Pods: pods}, t0.Add(time.Minute))
	if !equality.Semantic.DeepEqual(first.Status, second.Status) {
		t.Errorf("status changed with nothing else changing:\n%+v\n%+v", first.Status, second.Status)
	}
	if c := condition(second.Status, v1alpha1.EphemeralJobInitialized); c == nil || c.Reason != ReasonInitialized {
		t.Errorf("Initialized condition %+v, want True Initialized", c)
	}
}

func TestInvalidJobIsError(t *testing.T) {
	empty := newJob(func(j *v1alpha1.EphemeralJob) { j.Spec.Template.EphemeralContainers = nil })
	for name, snap := range map[string]Snapshot{
		"no containers":  {Job: empty, Pods: []*corev1.Pod{newPod(1)}},
		"no selector":    {Job: newJob(), SelectorError: "required"},
		"a bad selector": {Job: newJob(), SelectorError: "bad"},
	} {
		p := Compute(snap, t0)
		if c := condition(p.Status, v1alpha1.EphemeralJobConditionError); p.Status.Phase != v1alpha1.EphemeralJobError || c == nil || c.Reason != ReasonError || len(p.Inject) != 0 {
			t.Errorf("%s: phase %s, JobError %+v, inject %v; want Error, JobError, nothing", name, p.Status.Phase, c, podNames(p.Inject))
		}
	}
}
