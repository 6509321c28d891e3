package ephemeraljob

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/platform/seqsim"
)

// TestSequence runs jobs against simulated kubelets that start and end the injected containers
// in a seeded random order, and checks at every step: never more than parallelism pods in flight,
// never a pod injected twice, and every job finishes — Succeeded exactly when no pod failed.
func TestSequence(t *testing.T) {
	seqsim.Sequence{Seeds: seqsim.Seeds{First: 1, Count: 200}, Start: t0, Tick: seqsim.Every(time.Second)}.Run(t, runSequence)
}

// runSequence plans at every step until the job finishes, then checks how it finished.
func runSequence(h *seqsim.History) {
	rng := h.Rand()
	n, par := 1+rng.IntN(8), int32(1+rng.IntN(4))
	job := newJob(withParallelism(par))
	if rng.IntN(3) == 0 {
		job.Spec.Replicas = ptr.To(int32(1 + rng.IntN(n+1))) // 0 matches nothing: such a job waits
	}
	h.Logf("%d pods, parallelism %d, replicas %v", n, par, ptr.Deref(job.Spec.Replicas, -1))
	var pods []*corev1.Pod
	for i := range n {
		pods = append(pods, newPod(i))
	}
	failed := map[string]bool{}
	// A plan, then up to 500 moves of a pod, each followed by a plan.
	finished := h.Steps(1+500, func() bool {
		plan := Compute(Snapshot{Job: job, Pods: pods}, h.Now())
		job.Status = plan.Status
		if plan.Status.CompletionTime != nil {
			wantPhase := v1alpha1.EphemeralJobSucceeded
			if len(failed) > 0 {
				wantPhase = v1alpha1.EphemeralJobFailed
			}
			if plan.Status.Phase != wantPhase || plan.Status.Failed != int32(len(failed)) {
				h.Fatalf("finished %s with %d failed, want %s with %d", plan.Status.Phase, plan.Status.Failed, wantPhase, len(failed))
			}
			return true
		}
		for _, p := range plan.Inject {
			if Injected(job, p) {
				h.Fatalf("%s injected twice", p.Name)
			}
			injectInto(job, p)
			h.Logf("inject %s", p.Name)
		}
		if inFlight := plan.Status.Running + countInjectedWaiting(job, pods); inFlight > par {
			h.Fatalf("%d in flight, parallelism %d", inFlight, par)
		}
		movePod(h, job, pods[rng.IntN(len(pods))], failed)
		return false
	})
	if !finished {
		h.Fatalf("not finished after 500 steps: %+v", job.Status)
	}
}

// movePod moves p one step if it is injected: waiting → running → exited 0 or 1 (recorded in
// failed).
func movePod(h *seqsim.History, job *v1alpha1.EphemeralJob, p *corev1.Pod, failed map[string]bool) {
	if !Injected(job, p) {
		return
	}
	switch st := StateOf(templateNames(job), p); {
	case st == PodWaiting:
		p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "debug", State: running()}}
		h.Logf("%s runs", p.Name)
	case st == PodRunning:
		code := int32(h.Rand().IntN(2))
		if code != 0 {
			failed[p.Name] = true
		}
		p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "debug", State: exited(code)}}
		h.Logf("%s exits %d", p.Name, code)
	}
}

// countInjectedWaiting counts the pods injected whose containers have not started.
func countInjectedWaiting(job *v1alpha1.EphemeralJob, pods []*corev1.Pod) int32 {
	var n int32
	for _, p := range pods {
		if Injected(job, p) && StateOf(templateNames(job), p) == PodWaiting {
			n++
		}
	}
	return n
}
