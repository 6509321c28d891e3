package e2e

import (
	"context"
	"encoding/json"
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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/controller/ephemeraljob"
	"github.com/kruise-ng/kruise/test/harness"
)

// ejRunningPods creates n pods labelled app=<app> on the kwok nodes and waits until they run.
func ejRunningPods(t *testing.T, ns, app string, n int) []string {
	t.Helper()
	ctx := context.Background()
	var names []string
	for i := range n {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", app, i), Namespace: ns, Labels: map[string]string{"app": app}},
			Spec: podSpec("registry.example/app:v1")}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, pod.Name)
	}
	harness.Eventually(t, 60*time.Second, fmt.Sprintf("%d pods Running", n), func() (bool, string) {
		pods := podsByName(t, ns, "app="+app)
		running := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == n, fmt.Sprintf("%d/%d running", running, n)
	})
	return names
}

func newEphemeralJob(ns, name, app string) *appsv1alpha1.EphemeralJob {
	return &appsv1alpha1.EphemeralJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1alpha1.EphemeralJobSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Template: appsv1alpha1.EphemeralJobContainerTemplateSpec{EphemeralContainers: []corev1.EphemeralContainer{
				{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "registry.example/debug:v1",
					Command: []string{"sh", "-c", "exit 0"}}}}}}}
}

// waitEphemeralJob waits until the job satisfies cond and returns it.
func waitEphemeralJob(t *testing.T, c client.Client, ns, name, what string, timeout time.Duration, cond func(*appsv1alpha1.EphemeralJob) bool) *appsv1alpha1.EphemeralJob {
	t.Helper()
	job := &appsv1alpha1.EphemeralJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	return waitObject(t, c, job, what, timeout, cond, describeEphemeralJob)
}

func describeEphemeralJob(j *appsv1alpha1.EphemeralJob) string {
	st := j.Status
	var conds []string
	for _, c := range st.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return fmt.Sprintf("phase %q match %d waiting %d running %d succeeded %d failed %d completed %v conditions %v",
		st.Phase, st.Matches, st.Waiting, st.Running, st.Succeeded, st.Failed, st.CompletionTime != nil, conds)
}

// ejCondition returns the job's condition typ, or nil.
func ejCondition(j *appsv1alpha1.EphemeralJob, typ appsv1alpha1.EphemeralJobConditionType) *appsv1alpha1.EphemeralJobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == typ {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

// ejInjected are the pods (of app) holding the container debug marked with the job's UID.
func ejInjected(t *testing.T, ns, app string, uid types.UID) []string {
	t.Helper()
	var out []string
	for name, p := range podsByName(t, ns, "app="+app) {
		for _, c := range p.Spec.EphemeralContainers {
			if c.Name == "debug" && slices.Contains(c.Env, corev1.EnvVar{Name: appsv1alpha1.EphemeralContainerEnvKey, Value: string(uid)}) {
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ejSetState writes the state of the pod's ephemeral container debug through pods/status, as a
// kubelet would (kwok runs no container, and its stages never write ephemeralContainerStatuses).
func ejSetState(t *testing.T, ns, pod string, state corev1.ContainerState) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"status": map[string]any{"ephemeralContainerStatuses": []corev1.ContainerStatus{
		{Name: "debug", Image: "registry.example/debug:v1", State: state}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(ns).Patch(context.Background(), pod, types.MergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
}

func ejRunning() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
}

func ejExited(code int32) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: metav1.Now(), FinishedAt: metav1.Now()}}
}

// ejEvents are "type reason: note" of the events on the job.
func ejEvents(t *testing.T, ns, job string) []string {
	t.Helper()
	list, err := cs.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "EphemeralJob" && e.Regarding.Name == job {
			out = append(out, e.Type+" "+e.Reason+": "+e.Note)
		}
	}
	return out
}

// An EphemeralJob injects its container into at most replicas running pods, parallelism at a
// time, marked with KRUISE_EJOB_ID; a pod holding a container of the same name is left out and
// reported; the status follows the containers' statuses; pods with mixed outcomes end the job
// Failed (OpenKruise leaves it Unknown: kruise#2514), and its TTL then deletes it.
func TestEphemeralJobInjectsAndEndsMixed(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	pods := ejRunningPods(t, ns, "mixed", 4)
	// A user's own debug container in the last pod: the job must not claim it.
	last, err := cs.CoreV1().Pods(ns).Get(ctx, pods[3], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	last.Spec.EphemeralContainers = append(last.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "registry.example/debug:v1", ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePolicy: corev1.TerminationMessageReadFile}})
	if _, err := cs.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx, pods[3], last, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	job := newEphemeralJob(ns, "mixed", "mixed")
	job.Spec.Replicas, job.Spec.Parallelism, job.Spec.TTLSecondsAfterFinished = ptr.To[int32](3), ptr.To[int32](2), ptr.To[int32](3)
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	waitEphemeralJob(t, c, ns, job.Name, "3 targets waiting, 2 injected", 30*time.Second, func(j *appsv1alpha1.EphemeralJob) bool {
		return j.Status.Phase == appsv1alpha1.EphemeralJobWaiting && j.Status.Matches == 3 && j.Status.Waiting == 3 && j.Status.StartTime != nil &&
			len(ejInjected(t, ns, "mixed", job.UID)) == 2
	})
	harness.Consistently(t, 2*time.Second, "parallelism 2: no third pod injected while two wait", func() (bool, string) {
		got := ejInjected(t, ns, "mixed", job.UID)
		return slices.Equal(got, pods[:2]), fmt.Sprint(got)
	})

	ejSetState(t, ns, pods[0], ejRunning())
	waitEphemeralJob(t, c, ns, job.Name, "Running with 1 running", 30*time.Second, func(j *appsv1alpha1.EphemeralJob) bool {
		return j.Status.Phase == appsv1alpha1.EphemeralJobRunning && j.Status.Running == 1 && j.Status.Waiting == 2
	})
	ejSetState(t, ns, pods[0], ejExited(0))
	harness.Eventually(t, 30*time.Second, "a place freed: the third pod injected", func() (bool, string) {
		got := ejInjected(t, ns, "mixed", job.UID)
		return slices.Equal(got, pods[:3]), fmt.Sprint(got)
	})
	ejSetState(t, ns, pods[1], ejExited(1))
	ejSetState(t, ns, pods[2], ejExited(0))
	done := waitEphemeralJob(t, c, ns, job.Name, "Failed: 2 succeeded, 1 failed", 30*time.Second, func(j *appsv1alpha1.EphemeralJob) bool {
		return j.Status.Phase == appsv1alpha1.EphemeralJobFailed && j.Status.CompletionTime != nil && j.Status.Succeeded == 2 && j.Status.Failed == 1
	})
	if cond := ejCondition(done, appsv1alpha1.EphemeralJobFailure); cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != ephemeraljob.ReasonFailed ||
		cond.Message != "job finished with mixed outcomes: 2/3 pods succeeded, 1/3 pods failed" {
		t.Errorf("JobFailed condition %+v, want True JobFailed with the counts", cond)
	}
	if got := ejInjected(t, ns, "mixed", job.UID); slices.Contains(got, pods[3]) {
		t.Errorf("the pod with the user's own debug container was injected: %v", got)
	}
	harness.Eventually(t, 30*time.Second, "events: 3 injections, the conflict once, the end", func() (bool, string) {
		evs := ejEvents(t, ns, job.Name)
		var injected, conflicts int
		var failed bool
		for _, e := range evs {
			injected += boolInt(strings.HasPrefix(e, "Normal "+ephemeraljob.EventInjected+":"))
			conflicts += boolInt(strings.HasPrefix(e, "Warning "+ephemeraljob.EventConflict+":") && strings.Contains(e, pods[3]))
			failed = failed || strings.HasPrefix(e, "Warning "+ephemeraljob.ReasonFailed+":")
		}
		return injected == 3 && conflicts == 1 && failed, fmt.Sprint(evs)
	})
	harness.Eventually(t, 30*time.Second, "the job deleted 3s after it finished", func() (bool, string) {
		err := c.Get(ctx, client.ObjectKeyFromObject(job), &appsv1alpha1.EphemeralJob{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A paused EphemeralJob injects nothing and writes its status once; resumed, it injects, and
// activeDeadlineSeconds after its start it ends Failed with reason DeadlineExceeded while its
// container still waits, as OpenKruise ends it.
func TestEphemeralJobPausedThenDeadline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	ejRunningPods(t, ns, "slow", 1)
	job := newEphemeralJob(ns, "slow", "slow")
	job.Spec.Paused, job.Spec.ActiveDeadlineSeconds = true, ptr.To[int64](8)
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	paused := waitEphemeralJob(t, c, ns, job.Name, "Paused", 30*time.Second, func(j *appsv1alpha1.EphemeralJob) bool {
		return j.Status.Phase == appsv1alpha1.EphemeralJobPause && j.Status.Matches == 1
	})
	harness.Consistently(t, 2*time.Second, "paused: nothing injected, the status not rewritten", func() (bool, string) {
		j := &appsv1alpha1.EphemeralJob{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), j); err != nil {
			return false, err.Error()
		}
		got := ejInjected(t, ns, "slow", job.UID)
		return len(got) == 0 && j.ResourceVersion == paused.ResourceVersion, fmt.Sprintf("injected %v, resourceVersion %s (was %s)", got, j.ResourceVersion, paused.ResourceVersion)
	})
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":false}}`))
	if err := c.Patch(ctx, paused, patch); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "resumed: injected", func() (bool, string) {
		got := ejInjected(t, ns, "slow", job.UID)
		return len(got) == 1, fmt.Sprint(got)
	})
	done := waitEphemeralJob(t, c, ns, job.Name, "Failed at the deadline", 30*time.Second, func(j *appsv1alpha1.EphemeralJob) bool {
		return j.Status.Phase == appsv1alpha1.EphemeralJobFailed && j.Status.CompletionTime != nil
	})
	cond := ejCondition(done, appsv1alpha1.EphemeralJobFailure)
	if cond == nil || cond.Reason != ephemeraljob.ReasonDeadlineExceeded || cond.Message != fmt.Sprintf("EphemeralJob %s/slow was active longer than specified deadline", ns) {
		t.Errorf("JobFailed condition %+v, want DeadlineExceeded", cond)
	}
	if d := done.Status.CompletionTime.Sub(done.Status.StartTime.Time); d < 8*time.Second {
		t.Errorf("finished %s after its start, before its deadline of 8s", d)
	}
}

// Invalid EphemeralJobs are refused with the field's path; a job carrying OpenKruise's finalizer
// (one taken over) is deleted, the controller releasing the finalizer.
func TestEphemeralJobValidationAndTakeover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	for path, edit := range map[string]func(*appsv1alpha1.EphemeralJob){
		"spec.selector": func(j *appsv1alpha1.EphemeralJob) { j.Spec.Selector = &metav1.LabelSelector{} },
		"spec.template.ephemeralContainers[0].ports": func(j *appsv1alpha1.EphemeralJob) {
			j.Spec.Template.EphemeralContainers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
		},
		"spec.parallelism": func(j *appsv1alpha1.EphemeralJob) { j.Spec.Parallelism = ptr.To[int32](-1) },
	} {
		job := newEphemeralJob(ns, "bad", "none")
		edit(job)
		if err := c.Create(ctx, job); err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: created or refused otherwise: %v", path, err)
		}
	}
	job := newEphemeralJob(ns, "adopted", "none")
	job.Finalizers = []string{ephemeraljob.OpenKruiseFinalizer}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	waitEphemeralJob(t, c, ns, job.Name, "Waiting, matching no pod", 30*time.Second, func(j *appsv1alpha1.EphemeralJob) bool {
		cond := ejCondition(j, appsv1alpha1.EphemeralJobMatchedEmpty)
		return j.Status.Phase == appsv1alpha1.EphemeralJobWaiting && cond != nil && cond.Status == corev1.ConditionTrue
	})
	if err := c.Delete(ctx, job); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the job gone, its finalizer released", func() (bool, string) {
		j := &appsv1alpha1.EphemeralJob{}
		err := c.Get(ctx, client.ObjectKeyFromObject(job), j)
		return apierrors.IsNotFound(err), fmt.Sprintf("%v finalizers %v", err, j.Finalizers)
	})
}
