package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/controller/broadcastjob"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
	"github.com/kruise-ng/kruise/test/harness"
)

// newBroadcastJob is a BroadcastJob of the namespace's private nodes (privateNodes) whose pods
// exit 0 a second or two after they start (restartPolicy Never).
func newBroadcastJob(ns, name string) *appsv1beta1.BroadcastJob {
	pod := podSpec("registry.example/job:v1")
	pod.RestartPolicy = corev1.RestartPolicyNever
	pod.NodeSelector = map[string]string{"e2e.kruise.io/ns": ns}
	pod.Tolerations = []corev1.Toleration{{Key: privateTaint, Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
	return &appsv1beta1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1beta1.BroadcastJobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: pod}}}
}

// bcjFailing makes the job's pods exit with code 1 (pkg/app/sandbox/stages/pod-exit.yaml).
func bcjFailing(job *appsv1beta1.BroadcastJob) {
	job.Spec.Template.Annotations = map[string]string{sandbox.ExitCodeAnnotation: "1"}
}

func bcjCreate(t *testing.T, c client.Client, job client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
}

// waitBroadcastJob waits until the job satisfies cond and returns it.
func waitBroadcastJob(t *testing.T, c client.Client, ns, name, what string, timeout time.Duration, cond func(*appsv1beta1.BroadcastJob) bool) *appsv1beta1.BroadcastJob {
	t.Helper()
	job := &appsv1beta1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	return waitObject(t, c, job, what, timeout, cond, describeBroadcastJob)
}

func describeBroadcastJob(j *appsv1beta1.BroadcastJob) string {
	st := j.Status
	var conds []string
	for _, c := range st.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return fmt.Sprintf("phase %q desired %d active %d succeeded %d failed %d conditions %v", st.Phase, st.Desired, st.Active, st.Succeeded, st.Failed, conds)
}

// bcjFinishedAs reports whether the job ended with the condition typ (True, reason typ, OpenKruise's).
func bcjFinishedAs(typ appsv1beta1.BroadcastJobConditionType) func(*appsv1beta1.BroadcastJob) bool {
	return func(j *appsv1beta1.BroadcastJob) bool {
		n := len(j.Status.Conditions)
		return n == 1 && j.Status.Conditions[0].Type == typ && j.Status.Conditions[0].Status == corev1.ConditionTrue &&
			j.Status.Conditions[0].Reason == string(typ) && j.Status.CompletionTime != nil
	}
}

// bcjPods are the job's pods not being deleted, by name.
func bcjPods(t *testing.T, ns, job string) map[string]*corev1.Pod {
	t.Helper()
	return podsByName(t, ns, appspub.BroadcastJobNameLabel+"="+job)
}

func bcjRunning(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// bcjEvents are the reasons of the events on the job.
func bcjEvents(t *testing.T, ns, job string) []string {
	t.Helper()
	list, err := cs.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "BroadcastJob" && e.Regarding.Name == job {
			out = append(out, e.Reason)
		}
	}
	return out
}

// A BroadcastJob with parallelism 1 runs one pod at a time, one per node, each made as OpenKruise
// makes it (name, labels, owner, pinned by node affinity and bound by the scheduler), and
// completes once every node's pod succeeded.
func TestBroadcastJobParallelismCompletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	nodes := privateNodes(t, ns, 3)
	job := newBroadcastJob(ns, "one-at-a-time")
	job.Spec.Parallelism = ptr.To(intstr.FromInt32(1))
	bcjCreate(t, c, job)

	peak := 0
	waitBroadcastJob(t, c, ns, job.Name, "Complete with 3 pods succeeded", 90*time.Second, func(j *appsv1beta1.BroadcastJob) bool {
		active := 0
		for _, p := range bcjPods(t, ns, job.Name) {
			if bcjRunning(p) {
				active++
			}
		}
		peak = max(peak, active)
		return bcjFinishedAs(appsv1beta1.BroadcastJobComplete)(j) && j.Status.Phase == appsv1beta1.BroadcastJobPhaseCompleted &&
			j.Status.Succeeded == 3 && j.Status.Desired == 3 && j.Status.Active == 0 && j.Status.Failed == 0 && j.Status.StartTime != nil
	})
	if peak > 1 {
		t.Errorf("%d pods ran at once; parallelism is 1", peak)
	}
	got := &appsv1beta1.BroadcastJob{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	if msg := got.Status.Conditions[0].Message; msg != "Job completed, 3 pods succeeded, 0 pods failed" {
		t.Errorf("condition message %q", msg)
	}
	var onNodes []string
	for _, p := range bcjPods(t, ns, job.Name) {
		target := nodeeligibility.TargetNode(p)
		onNodes = append(onNodes, p.Spec.NodeName)
		ref := metav1.GetControllerOf(p)
		if !strings.HasPrefix(p.Name, job.Name+"-") || p.Labels[appspub.BroadcastJobNameLabel] != job.Name ||
			p.Labels[appspub.BroadcastJobControllerUIDLabel] != string(got.UID) || p.Labels["app"] != job.Name ||
			ref == nil || ref.Kind != "BroadcastJob" || ref.UID != got.UID || !ptr.Deref(ref.BlockOwnerDeletion, false) ||
			target != p.Spec.NodeName || p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("pod %s: labels %v owner %+v target %q node %q phase %s", p.Name, p.Labels, ref, target, p.Spec.NodeName, p.Status.Phase)
		}
	}
	sort.Strings(onNodes)
	if !slices.Equal(onNodes, nodes) {
		t.Errorf("pods on %v, want one on each of %v", onNodes, nodes)
	}
	if ev := bcjEvents(t, ns, job.Name); !slices.Contains(ev, broadcastjob.ReasonSuccessfulCreate) || !slices.Contains(ev, broadcastjob.ReasonJobComplete) {
		t.Errorf("events %v", ev)
	}
}

// Failed pods: FailFast fails the job and deletes what still runs (also when a pod restarts past
// failurePolicy.restartLimit); Continue completes it with the failures counted; Pause holds it
// until the failed pod is gone, then goes on.
func TestBroadcastJobFailurePolicies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)

	t.Run("FailFast", func(t *testing.T) {
		ns := namespace(t)
		privateNodes(t, ns, 2)
		job := newBroadcastJob(ns, "fail-fast")
		bcjFailing(job)
		bcjCreate(t, c, job)
		got := waitBroadcastJob(t, c, ns, job.Name, "Failed", 60*time.Second, bcjFinishedAs(appsv1beta1.BroadcastJobFailed))
		if got.Status.Phase != appsv1beta1.BroadcastJobPhaseFailed || got.Status.Failed < 1 || got.Status.Active != 0 ||
			got.Status.Conditions[0].Message != "failure policy is FailurePolicyTypeFailFast and failed pod is found" {
			t.Errorf("status: %s", describeBroadcastJob(got))
		}
		harness.Eventually(t, 30*time.Second, "no pod left running", func() (bool, string) {
			var seen []string
			for _, p := range bcjPods(t, ns, job.Name) {
				if bcjRunning(p) {
					seen = append(seen, p.Name)
				}
			}
			return len(seen) == 0, fmt.Sprint(seen)
		})
		if ev := bcjEvents(t, ns, job.Name); !slices.Contains(ev, broadcastjob.ReasonFailedPodFound) {
			t.Errorf("events %v, want %q", ev, broadcastjob.ReasonFailedPodFound)
		}
	})

	t.Run("FailFast past the restart limit", func(t *testing.T) {
		ns := namespace(t)
		privateNodes(t, ns, 2)
		job := newBroadcastJob(ns, "restart-limit")
		bcjFailing(job)
		job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure // the containers crash and restart in the pod
		job.Spec.FailurePolicy.RestartLimit = 1
		bcjCreate(t, c, job)
		waitBroadcastJob(t, c, ns, job.Name, "Failed", 60*time.Second, bcjFinishedAs(appsv1beta1.BroadcastJobFailed))
		harness.Eventually(t, 30*time.Second, "the restarting pods deleted", func() (bool, string) {
			pods := bcjPods(t, ns, job.Name)
			return len(pods) == 0, fmt.Sprint(len(pods))
		})
	})

	t.Run("Continue", func(t *testing.T) {
		ns := namespace(t)
		privateNodes(t, ns, 2)
		job := newBroadcastJob(ns, "continue")
		bcjFailing(job)
		job.Spec.FailurePolicy.Type = appsv1beta1.BroadcastJobFailurePolicyTypeContinue
		bcjCreate(t, c, job)
		got := waitBroadcastJob(t, c, ns, job.Name, "Complete with both pods failed", 60*time.Second, func(j *appsv1beta1.BroadcastJob) bool {
			return bcjFinishedAs(appsv1beta1.BroadcastJobComplete)(j) && j.Status.Failed == 2 && j.Status.Succeeded == 0
		})
		if msg := got.Status.Conditions[0].Message; msg != "Job completed, 0 pods succeeded, 2 pods failed" {
			t.Errorf("condition message %q", msg)
		}
	})

	t.Run("Pause", func(t *testing.T) {
		ns := namespace(t)
		privateNodes(t, ns, 2)
		job := newBroadcastJob(ns, "pause")
		bcjFailing(job)
		job.Spec.Parallelism = ptr.To(intstr.FromInt32(1))
		job.Spec.FailurePolicy.Type = appsv1beta1.BroadcastJobFailurePolicyTypePause
		bcjCreate(t, c, job)
		waitBroadcastJob(t, c, ns, job.Name, "paused by the failed pod", 60*time.Second, func(j *appsv1beta1.BroadcastJob) bool {
			return j.Status.Phase == appsv1beta1.BroadcastJobPhasePaused && j.Status.Failed == 1
		})
		pods := bcjPods(t, ns, job.Name)
		harness.Consistently(t, 4*time.Second, "no new pod while paused", func() (bool, string) {
			now := bcjPods(t, ns, job.Name)
			return len(now) == 1, fmt.Sprint(len(now))
		})
		// The fix: pods that succeed, and the failed pod removed so that its node runs again.
		if err := c.Patch(ctx, job, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"template":{"metadata":{"annotations":null}}}}`))); err != nil {
			t.Fatal(err)
		}
		for name := range pods {
			if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// As a user would, delete failed pods until the job is done: the controller may see the
		// deletion before the template's fix and run the node once more with the old template.
		got := waitBroadcastJob(t, c, ns, job.Name, "Complete once resumed", 60*time.Second, func(j *appsv1beta1.BroadcastJob) bool {
			for name, p := range bcjPods(t, ns, job.Name) {
				if p.Status.Phase == corev1.PodFailed {
					_ = cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
				}
			}
			return bcjFinishedAs(appsv1beta1.BroadcastJobComplete)(j) && j.Status.Succeeded == 2 && j.Status.Failed == 0
		})
		if ev := bcjEvents(t, ns, job.Name); !slices.Contains(ev, broadcastjob.ReasonPaused) || !slices.Contains(ev, broadcastjob.ReasonContinue) {
			t.Errorf("events %v; status %s", ev, describeBroadcastJob(got))
		}
	})
}

// An Always job still running at activeDeadlineSeconds fails: its running pods are deleted and
// counted failed.
func TestBroadcastJobActiveDeadline(t *testing.T) {
	t.Parallel()
	c := kruiseClient(t)
	ns := namespace(t)
	privateNodes(t, ns, 2)
	job := newBroadcastJob(ns, "deadline")
	bcjFailing(job)
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure // crash-loops: never ends
	job.Spec.FailurePolicy.RestartLimit = 1000
	job.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To[int64](5)
	bcjCreate(t, c, job)
	waitBroadcastJob(t, c, ns, job.Name, "2 pods running", 30*time.Second, func(j *appsv1beta1.BroadcastJob) bool { return j.Status.Active == 2 })
	got := waitBroadcastJob(t, c, ns, job.Name, "Failed at the deadline", 30*time.Second, bcjFinishedAs(appsv1beta1.BroadcastJobFailed))
	st := got.Status
	if st.Phase != appsv1beta1.BroadcastJobPhaseFailed || st.Active != 0 || st.Failed != 2 ||
		st.Conditions[0].Message != fmt.Sprintf("Job %s/%s was active longer than specified deadline", ns, job.Name) {
		t.Errorf("status: %s", describeBroadcastJob(got))
	}
	if d := st.CompletionTime.Sub(st.StartTime.Time); d < 5*time.Second || d > 15*time.Second {
		t.Errorf("failed %s after its start; the deadline is 5s", d)
	}
	harness.Eventually(t, 30*time.Second, "the pods deleted", func() (bool, string) {
		pods := bcjPods(t, ns, job.Name)
		return len(pods) == 0, fmt.Sprint(len(pods))
	})
	if ev := bcjEvents(t, ns, job.Name); !slices.Contains(ev, broadcastjob.ReasonDeadlineExceeded) {
		t.Errorf("events %v", ev)
	}
}

// A finished job is deleted ttlSecondsAfterFinished after it finished, and its pods with it. The
// job is created as v1alpha1: both versions are served and validated.
func TestBroadcastJobTTL(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	privateNodes(t, ns, 1)
	job := appsv1alpha1.BroadcastJobFromV1beta1(newBroadcastJob(ns, "ttl"))
	job.Spec.CompletionPolicy.TTLSecondsAfterFinished = ptr.To[int32](3)
	bcjCreate(t, c, job)
	got := waitBroadcastJob(t, c, ns, job.Name, "Complete", 60*time.Second, bcjFinishedAs(appsv1beta1.BroadcastJobComplete))
	done := got.Status.CompletionTime.Time
	harness.Eventually(t, 30*time.Second, "the job deleted", func() (bool, string) {
		err := c.Get(ctx, client.ObjectKeyFromObject(job), &appsv1alpha1.BroadcastJob{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if gone := time.Since(done); gone < 3*time.Second {
		t.Errorf("deleted %s after it finished; the TTL is 3s", gone)
	}
	harness.Eventually(t, 30*time.Second, "its pods collected", func() (bool, string) {
		pods := bcjPods(t, ns, job.Name)
		return len(pods) == 0, fmt.Sprint(len(pods))
	})
}

// A Never job follows its nodes: a node with an untolerated taint gets no pod until the taint is
// removed, and a node added later gets one too; the job never finishes.
func TestBroadcastJobFollowsNodes(t *testing.T) {
	t.Parallel()
	c := kruiseClient(t)
	ns := namespace(t)
	open := privateNodes(t, ns, 1)[0]
	blocked := privateNodes(t, ns, 1, corev1.Taint{Key: "e2e.kruise.io/blocked", Effect: corev1.TaintEffectNoSchedule})[0]
	job := newBroadcastJob(ns, "follow")
	job.Spec.CompletionPolicy.Type = appsv1beta1.BroadcastJobCompletionPolicyNever
	bcjCreate(t, c, job)
	nodesWithPods := func() []string {
		var out []string
		for _, p := range bcjPods(t, ns, job.Name) {
			out = append(out, nodeeligibility.TargetNode(p))
		}
		sort.Strings(out)
		return out
	}
	waitBroadcastJob(t, c, ns, job.Name, "the open node's pod succeeded", 60*time.Second, func(j *appsv1beta1.BroadcastJob) bool {
		return j.Status.Desired == 1 && j.Status.Succeeded == 1 && j.Status.Phase == appsv1beta1.BroadcastJobPhaseRunning
	})
	if got := nodesWithPods(); !slices.Equal(got, []string{open}) {
		t.Errorf("pods on %v, want only on %s (%s is tainted)", got, open, blocked)
	}

	patchNode(t, blocked, `{"spec":{"taints":[{"key":"`+privateTaint+`","value":"`+ns+`","effect":"NoSchedule"}]}}`)
	waitBroadcastJob(t, c, ns, job.Name, "the untainted node's pod succeeded", 60*time.Second, func(j *appsv1beta1.BroadcastJob) bool {
		return j.Status.Desired == 2 && j.Status.Succeeded == 2
	})
	added := privateNodes(t, ns, 1)[0]
	got := waitBroadcastJob(t, c, ns, job.Name, "the new node's pod succeeded", 60*time.Second, func(j *appsv1beta1.BroadcastJob) bool {
		return j.Status.Desired == 3 && j.Status.Succeeded == 3
	})
	want := []string{open, blocked, added}
	sort.Strings(want)
	if pods := nodesWithPods(); !slices.Equal(pods, want) || len(got.Status.Conditions) != 0 || got.Status.Phase != appsv1beta1.BroadcastJobPhaseRunning {
		t.Errorf("pods on %v (want %v); %s", pods, want, describeBroadcastJob(got))
	}
}

// The validating webhook refuses, in both versions, what OpenKruise refuses, at the field.
func TestBroadcastJobValidation(t *testing.T) {
	t.Parallel()
	c := kruiseClient(t)
	ns := namespace(t)
	beta := newBroadcastJob(ns, "always")
	beta.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	alpha := appsv1alpha1.BroadcastJobFromV1beta1(newBroadcastJob(ns, "never-ttl"))
	alpha.Spec.CompletionPolicy = appsv1alpha1.BroadcastJobCompletionPolicy{Type: appsv1alpha1.BroadcastJobCompletionPolicyNever,
		TTLSecondsAfterFinished: ptr.To[int32](10)}
	for obj, field := range map[client.Object]string{
		beta:  "spec.template.spec.restartPolicy",
		alpha: "spec.completionPolicy.ttlSecondsAfterFinished",
	} {
		err := c.Create(context.Background(), obj)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want Invalid at %s", obj.GetName(), err, field)
		}
	}
}
