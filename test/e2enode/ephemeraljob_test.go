package e2enode

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/controller/ephemeraljob"
	"github.com/kruise-ng/kruise/test/harness"
)

// ephemeralJobs: on a 2-pod CloneSet of the real node, an EphemeralJob whose debug container runs
// `exit 0` succeeds in both pods (the kubelet reports the containers exited 0) and its TTL then
// deletes it; a second job whose container exits 3 fails; a third whose container sleeps ends
// Failed (DeadlineExceeded) activeDeadlineSeconds after its start, its container left running, as
// OpenKruise leaves it.
func ephemeralJobs(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	clone := harness.NewCloneSet(ns, "web", 2, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, realPod("app", sb.Image("app:v1")).Spec)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "web", "2 pods ready", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.ReadyReplicas == 2 })

	job := func(name, container, script string, edit func(*appsv1alpha1.EphemeralJob)) *appsv1alpha1.EphemeralJob {
		j := &appsv1alpha1.EphemeralJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: appsv1alpha1.EphemeralJobSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Parallelism: ptr.To[int32](2),
				Template: appsv1alpha1.EphemeralJobContainerTemplateSpec{EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
					Name: container, Image: sb.Image("app:v1"), Command: []string{"sh", "-c", script}}}}}}}
		edit(j)
		if err := c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	wait := func(name, what string, timeout time.Duration, cond func(*appsv1alpha1.EphemeralJob) bool) *appsv1alpha1.EphemeralJob {
		j := &appsv1alpha1.EphemeralJob{}
		harness.Eventually(t, timeout, "EphemeralJob "+name+" "+what, func() (bool, string) {
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
				return false, err.Error()
			}
			return cond(j), ejDescribe(j)
		})
		return j
	}

	t0 := time.Now()
	ok := job("ok", "debug", "exit 0", func(j *appsv1alpha1.EphemeralJob) { j.Spec.TTLSecondsAfterFinished = ptr.To[int32](5) })
	done := wait(ok.Name, "Succeeded in both pods", 2*time.Minute, func(j *appsv1alpha1.EphemeralJob) bool {
		return j.Status.Phase == appsv1alpha1.EphemeralJobSucceeded && j.Status.Succeeded == 2 && j.Status.Matches == 2 && j.Status.CompletionTime != nil
	})
	t.Logf("the debug container ran in both pods in %.1fs", time.Since(t0).Seconds())
	if cond := ejConditionOf(done, appsv1alpha1.EphemeralJobSucceed); cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != ephemeraljob.ReasonSucceeded {
		t.Errorf("JobSucceeded condition %+v", cond)
	}
	for _, p := range listPods(t, cs, ns) {
		st := ejContainerStatus(p, "debug")
		if st == nil || st.State.Terminated == nil || st.State.Terminated.ExitCode != 0 {
			t.Errorf("pod %s: the kubelet reports debug as %+v, want exited 0", p.Name, st)
		}
	}
	harness.Eventually(t, time.Minute, "EphemeralJob ok deleted 5s after it finished", func() (bool, string) {
		err := c.Get(ctx, client.ObjectKeyFromObject(ok), &appsv1alpha1.EphemeralJob{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})

	failing := job("failing", "check", "exit 3", func(j *appsv1alpha1.EphemeralJob) { j.Spec.Replicas = ptr.To[int32](1) })
	failed := wait(failing.Name, "Failed", 2*time.Minute, func(j *appsv1alpha1.EphemeralJob) bool {
		return j.Status.Phase == appsv1alpha1.EphemeralJobFailed && j.Status.Failed == 1 && j.Status.Matches == 1 && j.Status.CompletionTime != nil
	})
	if cond := ejConditionOf(failed, appsv1alpha1.EphemeralJobFailure); cond == nil || cond.Reason != ephemeraljob.ReasonFailed {
		t.Errorf("JobFailed condition %+v, want reason %s", cond, ephemeraljob.ReasonFailed)
	}

	slow := job("slow", "sleeper", "sleep 3600", func(j *appsv1alpha1.EphemeralJob) {
		j.Spec.Replicas, j.Spec.ActiveDeadlineSeconds = ptr.To[int32](1), ptr.To[int64](5)
	})
	wait(slow.Name, "Running", time.Minute, func(j *appsv1alpha1.EphemeralJob) bool {
		return j.Status.Running == 1 || j.Status.CompletionTime != nil
	})
	ended := wait(slow.Name, "Failed at its deadline", time.Minute, func(j *appsv1alpha1.EphemeralJob) bool {
		return j.Status.Phase == appsv1alpha1.EphemeralJobFailed && j.Status.CompletionTime != nil
	})
	if cond := ejConditionOf(ended, appsv1alpha1.EphemeralJobFailure); cond == nil || cond.Reason != ephemeraljob.ReasonDeadlineExceeded {
		t.Errorf("JobFailed condition %+v, want reason %s", cond, ephemeraljob.ReasonDeadlineExceeded)
	}
	if d := ended.Status.CompletionTime.Sub(ended.Status.StartTime.Time); d < 5*time.Second {
		t.Errorf("ended %s after its start, before its 5s deadline", d)
	}
	sleeping := 0
	for _, p := range listPods(t, cs, ns) {
		if st := ejContainerStatus(p, "sleeper"); st != nil && st.State.Running != nil {
			sleeping++
		}
	}
	if sleeping != 1 {
		t.Errorf("%d pods still run the sleeper, want 1 (a deadline ends the job, not its container)", sleeping)
	}
}

func ejDescribe(j *appsv1alpha1.EphemeralJob) string {
	st := j.Status
	return fmt.Sprintf("phase %q match %d waiting %d running %d succeeded %d failed %d completed %v conditions %+v",
		st.Phase, st.Matches, st.Waiting, st.Running, st.Succeeded, st.Failed, st.CompletionTime != nil, st.Conditions)
}

func ejConditionOf(j *appsv1alpha1.EphemeralJob, typ appsv1alpha1.EphemeralJobConditionType) *appsv1alpha1.EphemeralJobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == typ {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func ejContainerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.EphemeralContainerStatuses {
		if p.Status.EphemeralContainerStatuses[i].Name == name {
			return &p.Status.EphemeralContainerStatuses[i]
		}
	}
	return nil
}
