package ephemeraljob

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newJob is a job with one container "debug" and the given options applied.
func newJob(opts ...func(*v1alpha1.EphemeralJob)) *v1alpha1.EphemeralJob {
	j := &v1alpha1.EphemeralJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ej", UID: "job-uid"},
		Spec: v1alpha1.EphemeralJobSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
			Template: v1alpha1.EphemeralJobContainerTemplateSpec{EphemeralContainers: []corev1.EphemeralContainer{
				{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}},
		},
	}
	for _, o := range opts {
		o(j)
	}
	return j
}

func withParallelism(n int32) func(*v1alpha1.EphemeralJob) {
	return func(j *v1alpha1.EphemeralJob) { j.Spec.Parallelism = ptr.To(n) }
}

func withReplicas(n int32) func(*v1alpha1.EphemeralJob) {
	return func(j *v1alpha1.EphemeralJob) { j.Spec.Replicas = ptr.To(n) }
}

func started(at time.Time) func(*v1alpha1.EphemeralJob) {
	return func(j *v1alpha1.EphemeralJob) { j.Status.StartTime = ptr.To(metav1.NewTime(at)) }
}

// newPod is a Running pod created i seconds after t0.
func newPod(i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
			CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(i) * time.Second)), Labels: map[string]string{"app": "a"}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// injectInto gives pod the job's containers as the controller does.
func injectInto(job *v1alpha1.EphemeralJob, pod *corev1.Pod) *corev1.Pod {
	for _, c := range job.Spec.Template.EphemeralContainers {
		c.Env = append(c.Env, corev1.EnvVar{Name: v1alpha1.EphemeralContainerEnvKey, Value: string(job.UID)})
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, c)
	}
	return pod
}

// withState sets the status of the pod's ephemeral container name.
func withState(pod *corev1.Pod, name string, state corev1.ContainerState) *corev1.Pod {
	pod.Status.EphemeralContainerStatuses = append(pod.Status.EphemeralContainerStatuses, corev1.ContainerStatus{Name: name, State: state})
	return pod
}

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}
}

func exited(code int32) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.NewTime(t0)}}
}

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}

// podNames are the names of pods.
func podNames(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// condition returns the status's condition typ, or nil.
func condition(st v1alpha1.EphemeralJobStatus, typ v1alpha1.EphemeralJobConditionType) *v1alpha1.EphemeralJobCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}
