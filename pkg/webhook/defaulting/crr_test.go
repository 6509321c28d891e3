package defaulting

import (
	"context"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// preStop, ports and statusContext are filled from the pod and may not be set by whoever creates
// the request (else creating a request would run any command in the container).
func TestCRRReadOnlyFields(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid"},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app",
			Ports:     []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
			Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"drain"}}}}}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "containerd://c1", RestartCount: 2}}}}
	d := crrDefaulter{pods: fake.NewClientBuilder().WithObjects(pod).Build()}
	ctx := admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create}})
	request := func(edit func(*v1alpha1.ContainerRecreateRequestContainer)) *v1alpha1.ContainerRecreateRequest {
		c := v1alpha1.ContainerRecreateRequestContainer{Name: "app"}
		edit(&c)
		return &v1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"},
			Spec: v1alpha1.ContainerRecreateRequestSpec{PodName: "p", Containers: []v1alpha1.ContainerRecreateRequestContainer{c}}}
	}
	for name, tc := range map[string]struct {
		edit func(*v1alpha1.ContainerRecreateRequestContainer)
		want string
	}{
		"preStop": {func(c *v1alpha1.ContainerRecreateRequestContainer) {
			c.PreStop = &v1alpha1.ContainerRecreateRequestPreStop{Exec: &corev1.ExecAction{Command: []string{"rm", "-rf", "/"}}}
		}, "spec.containers[0].preStop"},
		"ports": {func(c *v1alpha1.ContainerRecreateRequestContainer) {
			c.Ports = []corev1.ContainerPort{{ContainerPort: 22}}
		}, "spec.containers[0].ports"},
		"statusContext": {func(c *v1alpha1.ContainerRecreateRequestContainer) {
			c.StatusContext = &v1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://other"}
		}, "spec.containers[0].statusContext"},
	} {
		err := d.Default(ctx, request(tc.edit))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("%s set by the user: %v, want Forbidden at %s", name, err, tc.want)
		}
	}
	crr := request(func(*v1alpha1.ContainerRecreateRequestContainer) {})
	if err := d.Default(ctx, crr); err != nil {
		t.Fatal(err)
	}
	c := crr.Spec.Containers[0]
	if c.PreStop == nil || c.PreStop.Exec.Command[0] != "drain" || len(c.Ports) != 1 || c.Ports[0].ContainerPort != 80 ||
		c.StatusContext == nil || c.StatusContext.ContainerID != "containerd://c1" || crr.Labels[v1alpha1.ContainerRecreateRequestPodUIDKey] != "uid" {
		t.Errorf("filled from the pod: %+v, labels %v", c, crr.Labels)
	}
}

// A pod with restartPolicy Never is refused while it runs (a stopped container would not start
// again) and accepted once it has ended: the SidecarTerminator's request to stop its sidecars.
func TestCRRRestartPolicyNever(t *testing.T) {
	ctx := admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create}})
	for phase, ok := range map[corev1.PodPhase]bool{corev1.PodRunning: false, corev1.PodSucceeded: true, corev1.PodFailed: true} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid"},
			Spec:   corev1.PodSpec{NodeName: "n1", RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "sidecar"}}},
			Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{Name: "sidecar", ContainerID: "containerd://c1"}}}}
		d := crrDefaulter{pods: fake.NewClientBuilder().WithObjects(pod).Build()}
		crr := &v1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"},
			Spec: v1alpha1.ContainerRecreateRequestSpec{PodName: "p", Containers: []v1alpha1.ContainerRecreateRequestContainer{{Name: "sidecar"}}}}
		if err := d.Default(ctx, crr); (err == nil) != ok {
			t.Errorf("phase %s: %v, want accepted %v", phase, err, ok)
		}
	}
}
