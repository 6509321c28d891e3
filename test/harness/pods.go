package harness

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Namespace creates a namespace for one test and deletes it afterwards.
func Namespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// PodCondition returns the status of the pod's condition typ, or "<none>".
func PodCondition(pod *corev1.Pod, typ corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return "<none>"
}

// DescribePod summarises what a test needs to see of a pod when a wait fails.
func DescribePod(pod *corev1.Pod) string {
	var cs []string
	for _, c := range pod.Status.ContainerStatuses {
		state := "waiting"
		if c.State.Running != nil {
			state = "running"
		}
		cs = append(cs, fmt.Sprintf("%s image=%s imageID=%s restarts=%d ready=%v %s", c.Name, c.Image, c.ImageID, c.RestartCount, c.Ready, state))
	}
	var conds []string
	for _, c := range pod.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	return fmt.Sprintf("pod %s uid=%s phase=%s node=%s conditions=[%s] containers=[%s]", pod.Name, pod.UID,
		pod.Status.Phase, pod.Spec.NodeName, strings.Join(conds, " "), strings.Join(cs, "; "))
}
