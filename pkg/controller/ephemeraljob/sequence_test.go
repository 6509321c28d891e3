package ephemeraljob

import (
	"math/rand"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// TestSequence runs jobs against simulated kubelets that start and end the injected containers
// in a seeded random order, and checks at every step: never more than parallelism pods in flight,
// never a pod injected twice, and every job finishes — Succeeded exactly when no pod failed.
func TestSequence(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		n, par := 1+rng.Intn(8), int32(1+rng.Intn(4))
		job := newJob(withParallelism(par))
		if rng.Intn(3) == 0 {
			job.Spec.Replicas = ptr.To(int32(1 + rng.Intn(n+1))) // 0 matches nothing: such a job waits
		}
		var pods []*corev1.Pod
		for i := range n {
			pods = append(pods, newPod(i))
		}
		failed := map[string]bool{}
		now := t0
		for step := 0; ; step++ {
			if step > 500 {
				t.Fatalf("seed %d: not finished after 500 steps: %+v", seed, job.Status)
			}
			plan := Compute(Snapshot{Job: job, Pods: pods}, now)
			job.Status = plan.Status
			if plan.Status.CompletionTime != nil {
				wantPhase := v1alpha1.EphemeralJobSucceeded
				if len(failed) > 0 {
					wantPhase = v1alpha1.EphemeralJobFailed
				}
				if plan.Status.Phase != wantPhase || plan.Status.Failed != int32(len(failed)) {
					t.Fatalf("seed %d: finished %s with %d failed, want %s with %d", seed, plan.Status.Phase, plan.Status.Failed, wantPhase, len(failed))
				}
				break
			}
			for _, p := range plan.Inject {
				if Injected(job, p) {
					t.Fatalf("seed %d step %d: %s injected twice", seed, step, p.Name)
				}
				injectInto(job, p)
			}
			if inFlight := plan.Status.Running + countInjectedWaiting(job, pods); inFlight > par {
				t.Fatalf("seed %d step %d: %d in flight, parallelism %d", seed, step, inFlight, par)
			}
			// A random injected pod moves one step: waiting → running → exited 0 or 1.
			p := pods[rng.Intn(len(pods))]
			if Injected(job, p) {
				switch st := StateOf(templateNames(job), p); {
				case st == PodWaiting:
					p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "debug", State: running()}}
				case st == PodRunning:
					code := int32(rng.Intn(2))
					if code != 0 {
						failed[p.Name] = true
					}
					p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "debug", State: exited(code)}}
				}
			}
			now = now.Add(time.Second)
		}
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
