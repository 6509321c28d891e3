package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/test/harness"
)

// launchPod is a pod no node runs (its node selector matches none), so that the test plays the
// kubelet by writing its container statuses.
func launchPod(ns string, ordered bool, prios ...string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "launch-"},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"e2e.kruise.io/no-such-node": "true"}, TerminationGracePeriodSeconds: ptr.To[int64](1)}}
	if ordered {
		pod.Annotations = map[string]string{appspub.ContainerLaunchPriorityKey: appspub.ContainerLaunchOrdered}
	}
	for i, p := range prios {
		c := corev1.Container{Name: fmt.Sprintf("c%d", i), Image: "registry.example/app:v1"}
		if p != "" {
			c.Env = []corev1.EnvVar{{Name: appspub.ContainerLaunchPriorityEnvName, Value: p}}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	return pod
}

// barrierOf lists the pod's barrier keys by container ("-" for none).
func barrierOf(t *testing.T, pod *corev1.Pod) []string {
	t.Helper()
	var out []string
	for _, c := range pod.Spec.Containers {
		key := "-"
		for _, e := range c.Env {
			if e.Name == appspub.ContainerLaunchBarrierEnvName {
				if ref := e.ValueFrom.ConfigMapKeyRef; ref == nil || ref.Name != pod.Name+"-barrier" {
					t.Fatalf("container %s: barrier env %+v, want a key of ConfigMap %s-barrier", c.Name, e, pod.Name)
				}
				key = e.ValueFrom.ConfigMapKeyRef.Key
			}
		}
		out = append(out, key)
	}
	return out
}

// setReady writes the pod's container statuses through pods/status, as a kubelet would: the listed
// containers running and ready, the others waiting.
func setReady(t *testing.T, pod *corev1.Pod, ready ...string) {
	t.Helper()
	var st []corev1.ContainerStatus
	for _, c := range pod.Spec.Containers {
		s := corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError"}}}
		if slices.Contains(ready, c.Name) {
			s.Ready, s.Started = true, ptr.To(true)
			s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
		}
		st = append(st, s)
	}
	raw, _ := json.Marshal(map[string]any{"status": map[string]any{"containerStatuses": st}})
	if _, err := cs.CoreV1().Pods(pod.Namespace).Patch(context.Background(), pod.Name, types.StrategicMergePatchType, raw, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
}

// barrierKeys reads the pod's barrier ConfigMap: its keys, sorted, and whether the pod owns it.
func barrierKeys(pod *corev1.Pod) (string, error) {
	cm, err := cs.CoreV1().ConfigMaps(pod.Namespace).Get(context.Background(), pod.Name+"-barrier", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != pod.UID || cm.OwnerReferences[0].Kind != "Pod" {
		return "", fmt.Errorf("barrier owners %v, want pod %s", cm.OwnerReferences, pod.UID)
	}
	var keys []string
	for k := range cm.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ","), nil
}

func waitBarrier(t *testing.T, pod *corev1.Pod, want string) {
	t.Helper()
	harness.Eventually(t, 30*time.Second, "barrier of "+pod.Name+" = "+want, func() (bool, string) {
		got, err := barrierKeys(pod)
		if err != nil {
			return false, err.Error()
		}
		return got == want, got
	})
}

func holdsBarrier(t *testing.T, pod *corev1.Pod, want string) {
	t.Helper()
	harness.Consistently(t, 3*time.Second, "barrier of "+pod.Name+" stays "+want, func() (bool, string) {
		got, err := barrierKeys(pod)
		return err == nil && got == want, fmt.Sprint(got, err)
	})
}

// Container launch priority at pod start: the webhook gives an Ordered pod made with generateName
// (and a pod with KRUISE_CONTAINER_PRIORITY values) its barrier env; the controller creates the
// barrier owned by the pod and releases each priority only once the higher ones are ready, even
// after the barrier is deleted; then it marks the pod completed. Pods that do not ask are left
// alone, and a priority that is not an integer is refused.
func TestContainerLaunchPriority(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := namespace(t)

	t.Run("Ordered", func(t *testing.T) {
		pod, err := cs.CoreV1().Pods(ns).Create(ctx, launchPod(ns, true, "", "", ""), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(barrierOf(t, pod), " "); got != "p_0 p_-1 p_-2" || !strings.HasPrefix(pod.Name, "launch-") {
			t.Fatalf("pod %s: barrier keys %q, want p_0 p_-1 p_-2", pod.Name, got)
		}
		waitBarrier(t, pod, "p_0")
		setReady(t, pod, "c1", "c2") // out of order: the later ones alone release nothing
		holdsBarrier(t, pod, "p_0")
		setReady(t, pod, "c0")
		waitBarrier(t, pod, "p_-1,p_0")
		// Deleted mid-way: back with what was released, and no more.
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, pod.Name+"-barrier", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		setReady(t, pod, "c0", "c2")
		waitBarrier(t, pod, "p_-1,p_0")
		setReady(t, pod, "c0", "c1")
		waitBarrier(t, pod, "p_-1,p_-2,p_0")
		harness.Eventually(t, 30*time.Second, "pod marked completed", func() (bool, string) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return p.Annotations[appspub.ContainerLaunchPriorityCompletedKey] == "true", fmt.Sprint(p.Annotations)
		})
		// Completed, then deleted: back with every key, for the containers' restarts.
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, pod.Name+"-barrier", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitBarrier(t, pod, "p_-1,p_-2,p_0")
	})

	t.Run("env priorities", func(t *testing.T) {
		pod, err := cs.CoreV1().Pods(ns).Create(ctx, launchPod(ns, false, "", "10", "-3"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(barrierOf(t, pod), " "); got != "p_0 p_10 p_-3" {
			t.Fatalf("barrier keys %q, want p_0 p_10 p_-3", got)
		}
		waitBarrier(t, pod, "p_10")
		setReady(t, pod, "c1")
		waitBarrier(t, pod, "p_0,p_10")
		holdsBarrier(t, pod, "p_0,p_10")
		setReady(t, pod, "c1", "c0")
		waitBarrier(t, pod, "p_-3,p_0,p_10")
	})

	t.Run("a SidecarSet's sidecar is ordered by its priority", func(t *testing.T) {
		proxy := corev1.Container{Name: "proxy", Image: "registry.example/proxy:v1",
			Env: []corev1.EnvVar{{Name: appspub.ContainerLaunchPriorityEnvName, Value: "5"}}}
		createSidecarSet(t, kruiseClient(t), newSidecarSet("launch-"+ns, ns, "launch-sidecar", proxy, appsv1beta1.SidecarSetBeforeAppContainer))
		p := launchPod(ns, false, "") // one container, no order of its own
		p.Labels = map[string]string{"app": "launch-sidecar"}
		pod, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(containerNames(pod.Spec.Containers), barrierOf(t, pod)); got != "[proxy c0] [p_5 p_0]" {
			t.Fatalf("containers and keys %s, want [proxy c0] [p_5 p_0]", got)
		}
		waitBarrier(t, pod, "p_5")
		setReady(t, pod, "proxy")
		waitBarrier(t, pod, "p_0,p_5")
	})

	t.Run("pods that do not ask", func(t *testing.T) {
		for _, p := range []*corev1.Pod{launchPod(ns, false, "", ""), launchPod(ns, false, "2", "2"), launchPod(ns, true, "")} {
			pod, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(barrierOf(t, pod), " "); strings.Trim(got, "- ") != "" {
				t.Errorf("pod %s got barrier keys %q", pod.Name, got)
			}
			harness.Consistently(t, time.Second, "no barrier for "+pod.Name, func() (bool, string) {
				_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, pod.Name+"-barrier", metav1.GetOptions{})
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
		}
	})

	t.Run("a priority that is not an integer is refused", func(t *testing.T) {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, launchPod(ns, false, "1", "high"), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "spec.containers[1].env[0].value") {
			t.Fatalf("create: %v, want refused naming spec.containers[1].env[0].value", err)
		}
	})

	t.Run("another ConfigMap of the barrier's name is left alone", func(t *testing.T) {
		p := launchPod(ns, true, "", "")
		p.GenerateName, p.Name = "", "taken"
		mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken-barrier"}, Data: map[string]string{"user": "data"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, mine, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		harness.Consistently(t, 3*time.Second, "the user's ConfigMap untouched", func() (bool, string) {
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "taken-barrier", metav1.GetOptions{})
			return err == nil && len(cm.Data) == 1 && len(cm.OwnerReferences) == 0, fmt.Sprint(cm.Data, err)
		})
		harness.Eventually(t, 30*time.Second, "a warning event on the pod", func() (bool, string) {
			list, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + pod.Name})
			if err != nil {
				return false, err.Error()
			}
			var reasons []string
			for _, e := range list.Items {
				if e.Reason == "LaunchBarrierNotOwned" && strings.Contains(e.Note, "taken-barrier") {
					return true, ""
				}
				reasons = append(reasons, e.Reason)
			}
			return false, fmt.Sprint(reasons)
		})
	})
}
