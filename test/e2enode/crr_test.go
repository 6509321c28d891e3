package e2enode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// containerRecreate: a ContainerRecreateRequest restarts the app container of a running two-container
// CloneSet pod: the pod is held not ready for the unready grace period first, the container's preStop
// hook runs, the kubelet starts it again (restart count 1, the sidecar untouched, same pod), the
// request reports it and the pod is Ready again.
func containerRecreate(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	spec := realPod("app", sb.Image("app:v1")).Spec
	spec.Volumes = []corev1.Volume{{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	mount := []corev1.VolumeMount{{Name: "shared", MountPath: "/shared"}}
	spec.Containers[0].VolumeMounts = mount
	spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "echo prestop-ran > /shared/prestop"}}}}
	side := spec.Containers[0]
	side.Name, side.Lifecycle = "side", nil
	spec.Containers = append(spec.Containers, side)
	clone := harness.NewCloneSet(ns, "crr", 1, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, spec)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "crr", "its pod ready", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.ReadyReplicas == 1 })
	var pod *corev1.Pod
	for _, p := range listPods(t, cs, ns) {
		pod = p
	}

	// A request naming a container the pod lacks is refused, with the field.
	bad := &appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: pod.Name, Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "nope"}}}}
	if err := c.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "spec.containers[0].name") {
		t.Errorf("a request for a missing container: %v, want a refusal naming spec.containers[0].name", err)
	}

	crr := &appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "restart-app"},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: pod.Name,
			Containers:              []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app"}},
			Strategy:                &appsv1alpha1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](2)},
			TTLSecondsAfterFinished: ptr.To[int32](600)}}
	t0 := time.Now()
	if err := c.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	if crr.Labels[appsv1alpha1.ContainerRecreateRequestNodeNameKey] != sandbox.RealNodeName || crr.Spec.Containers[0].StatusContext == nil ||
		crr.Spec.Containers[0].PreStop == nil {
		t.Errorf("the webhook did not complete the request from its pod: labels %v, containers %+v", crr.Labels, crr.Spec.Containers)
	}
	// The pod turns not ready before its container is stopped.
	notReady := waitPod(t, cs, ns, pod.Name, 30*time.Second, "held not ready by the request", func(p *corev1.Pod) bool {
		return harness.PodCondition(p, appspub.KruisePodReadyConditionType) == corev1.ConditionFalse
	})
	if rc := notReady.Status.ContainerStatuses[0].RestartCount; rc != 0 {
		t.Errorf("the container restarted (%d) before the pod was held not ready", rc)
	}
	harness.Eventually(t, 60*time.Second, "the request completes", func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(crr), crr); err != nil {
			return false, err.Error()
		}
		return crr.Status.Phase == appsv1alpha1.ContainerRecreateRequestCompleted, fmt.Sprintf("%+v", crr.Status)
	})
	took := time.Since(t0)
	t.Logf("request completed in %.1fs: %s", took.Seconds(), crr.Status.Message)
	// The grace period counts from the unready-acquired annotation (whole seconds, as OpenKruise
	// records it), so it is checked against the times the request records, not the test's clock.
	acquired, err := time.Parse(time.RFC3339, crr.Annotations[appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey])
	if err != nil || crr.Status.CompletionTime == nil {
		t.Errorf("unready-acquired %q (%v), completion %v", crr.Annotations[appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey], err, crr.Status.CompletionTime)
	} else if held := crr.Status.CompletionTime.Sub(acquired); held < 2*time.Second {
		t.Errorf("the request completed %s after the pod was held not ready, within its 2s unready grace period", held)
	}
	if s := crr.Status.ContainerRecreateStates; len(s) != 1 || s[0].Phase != appsv1alpha1.ContainerRecreateRequestSucceeded || !s[0].IsKilled {
		t.Errorf("container states %+v, want app Succeeded and killed", s)
	}
	after := waitPod(t, cs, ns, pod.Name, 30*time.Second, "Ready again with app restarted once", func(p *corev1.Pod) bool {
		return harness.PodCondition(p, corev1.PodReady) == corev1.ConditionTrue && len(p.Status.ContainerStatuses) == 2
	})
	for _, st := range after.Status.ContainerStatuses {
		want := int32(0)
		if st.Name == "app" {
			want = 1
		}
		if st.RestartCount != want {
			t.Errorf("container %s restarted %d times, want %d", st.Name, st.RestartCount, want)
		}
	}
	if after.UID != pod.UID {
		t.Errorf("the pod was replaced: %s → %s", pod.UID, after.UID)
	}
	// (kubectl notes on stderr which of the two containers it ran cat in.)
	if got := execIn(t, sb, ns, pod.Name, "cat", "/shared/prestop"); !strings.HasSuffix(got, "prestop-ran") {
		t.Errorf("/shared/prestop says %q, want the preStop hook's mark", got)
	}
	harness.Eventually(t, 30*time.Second, "the request is no longer active", func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(crr), crr); err != nil {
			return false, err.Error()
		}
		_, active := crr.Labels[appsv1alpha1.ContainerRecreateRequestActiveKey]
		return !active, fmt.Sprintf("labels %v", crr.Labels)
	})
}
