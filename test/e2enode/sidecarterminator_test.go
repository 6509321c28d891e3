package e2enode

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/controller/sidecarterminator"
	"github.com/kruise-ng/kruise/test/harness"
)

// sidecarTerminatorJob: a batch/v1 Job whose pod (restartPolicy Never) runs a main container that
// exits 0 after two seconds and a sidecar that would run forever (KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT)
// completes: the pod ends Succeeded with the condition SidecarTerminated, its sidecar stopped and
// never started again, and the stop request kruise-daemon served completes.
func sidecarTerminatorJob(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	spec := realPod("job", sb.Image("app:v1")).Spec
	spec.RestartPolicy = corev1.RestartPolicyNever
	spec.Containers[0].Command = []string{"sh", "-c", "sleep 2"}
	spec.Containers = append(spec.Containers, corev1.Container{Name: "sidecar", Image: sb.Image("app:v1"),
		Command: []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"},
		Env:     []corev1.EnvVar{{Name: sidecarterminator.TerminateEnv, Value: "true"}}})
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "with-sidecar"},
		Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: corev1.PodTemplateSpec{Spec: spec}}}
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	harness.Eventually(t, 2*time.Minute, "the Job complete", func() (bool, string) {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return j.Status.Succeeded == 1, fmt.Sprintf("%+v", j.Status)
	})
	t.Logf("the Job with a sidecar completed in %.1fs", time.Since(t0).Seconds())
	pods := listPods(t, cs, ns)
	if len(pods) != 1 {
		t.Fatalf("%d pods, want the Job's one", len(pods))
	}
	for _, p := range pods {
		terminated := false
		for _, cond := range p.Status.Conditions {
			terminated = terminated || (cond.Type == sidecarterminator.SidecarTerminated && cond.Status == corev1.ConditionTrue)
		}
		if p.Status.Phase != corev1.PodSucceeded || !terminated {
			t.Errorf("pod %s: %s", p.Name, harness.DescribePod(p))
		}
		harness.Eventually(t, time.Minute, "the sidecar stopped", func() (bool, string) {
			cur, err := cs.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, s := range cur.Status.ContainerStatuses {
				if s.Name == "sidecar" {
					return s.State.Terminated != nil && s.RestartCount == 0, fmt.Sprintf("%+v", s.State)
				}
			}
			return false, "no sidecar status"
		})
		// The stop request ends too: the sidecar stopped, not waited for (the kubelet never starts it again).
		harness.Eventually(t, time.Minute, "the stop request completed", func() (bool, string) {
			crr := &v1alpha1.ContainerRecreateRequest{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: sidecarterminator.CRRName(p)}, crr); err != nil {
				return false, err.Error()
			}
			st := crr.Status
			return st.Phase == v1alpha1.ContainerRecreateRequestCompleted && len(st.ContainerRecreateStates) == 1 &&
				st.ContainerRecreateStates[0].Phase == v1alpha1.ContainerRecreateRequestSucceeded, fmt.Sprintf("%+v", st)
		})
	}
}
