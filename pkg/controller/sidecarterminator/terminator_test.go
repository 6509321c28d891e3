package sidecarterminator

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func jobPod(policy corev1.RestartPolicy, phase corev1.PodPhase, states map[string]*corev1.ContainerStateTerminated) *corev1.Pod {
	pod := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: policy, Containers: []corev1.Container{{Name: "main"},
		{Name: "proxy", Env: []corev1.EnvVar{{Name: TerminateEnv, Value: "TRUE"}}},
		{Name: "log", Env: []corev1.EnvVar{{Name: TerminateWithImageEnv, Value: "registry.example/empty"}}}}},
		Status: corev1.PodStatus{Phase: phase}}
	for _, c := range pod.Spec.Containers {
		s := corev1.ContainerStatus{Name: c.Name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
		if t, ok := states[c.Name]; ok {
			s.State = corev1.ContainerState{Terminated: t}
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, s)
	}
	return pod
}

var exit0, exit1 = &corev1.ContainerStateTerminated{ExitCode: 0}, &corev1.ContainerStateTerminated{ExitCode: 1}

// Due: main containers done (OnFailure: done with 0), a sidecar still running, not Pending, not
// Always, not being deleted.
func TestDue(t *testing.T) {
	deleting := jobPod(corev1.RestartPolicyNever, corev1.PodRunning, map[string]*corev1.ContainerStateTerminated{"main": exit0})
	deleting.DeletionTimestamp = &metav1.Time{}
	noSidecar := jobPod(corev1.RestartPolicyNever, corev1.PodRunning, map[string]*corev1.ContainerStateTerminated{"main": exit0})
	noSidecar.Spec.Containers = noSidecar.Spec.Containers[:1]
	noSidecar.Status.ContainerStatuses = noSidecar.Status.ContainerStatuses[:1]
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"Never, main exited 1":        {jobPod(corev1.RestartPolicyNever, corev1.PodRunning, map[string]*corev1.ContainerStateTerminated{"main": exit1}), true},
		"OnFailure, main exited 0":    {jobPod(corev1.RestartPolicyOnFailure, corev1.PodRunning, map[string]*corev1.ContainerStateTerminated{"main": exit0}), true},
		"OnFailure, main exited 1":    {jobPod(corev1.RestartPolicyOnFailure, corev1.PodRunning, map[string]*corev1.ContainerStateTerminated{"main": exit1}), false},
		"main still running":          {jobPod(corev1.RestartPolicyNever, corev1.PodRunning, nil), false},
		"Always":                      {jobPod(corev1.RestartPolicyAlways, corev1.PodRunning, map[string]*corev1.ContainerStateTerminated{"main": exit0}), false},
		"Pending":                     {jobPod(corev1.RestartPolicyNever, corev1.PodPending, map[string]*corev1.ContainerStateTerminated{"main": exit0}), false},
		"sidecars all stopped":        {jobPod(corev1.RestartPolicyNever, corev1.PodSucceeded, map[string]*corev1.ContainerStateTerminated{"main": exit0, "proxy": exit0, "log": exit1}), false},
		"ended, a sidecar still runs": {jobPod(corev1.RestartPolicyNever, corev1.PodSucceeded, map[string]*corev1.ContainerStateTerminated{"main": exit0, "log": exit0}), true},
		"being deleted":               {deleting, false},
		"no sidecar":                  {noSidecar, false},
	} {
		if got := Due(tc.pod); got != tc.want {
			t.Errorf("%s: Due = %v, want %v", name, got, tc.want)
		}
	}
}

// The pod ends Succeeded only when every main container exited 0; the sidecars still running
// are the ones to stop.
func TestPhaseAndRunning(t *testing.T) {
	ok := jobPod(corev1.RestartPolicyNever, corev1.PodRunning, map[string]*corev1.ContainerStateTerminated{"main": exit0, "log": exit0})
	if Phase(ok) != corev1.PodSucceeded || !slices.Equal(Running(ok), []string{"proxy"}) {
		t.Errorf("phase %s, running %v", Phase(ok), Running(ok))
	}
	failed := jobPod(corev1.RestartPolicyNever, corev1.PodRunning, map[string]*corev1.ContainerStateTerminated{"main": exit1})
	if Phase(failed) != corev1.PodFailed || !slices.Equal(Running(failed), []string{"log", "proxy"}) {
		t.Errorf("phase %s, running %v", Phase(failed), Running(failed))
	}
}
