package containerlaunchpriority

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

func reconcileOnce(t *testing.T, c client.Client, pod *corev1.Pod) {
	t.Helper()
	r := &Reconciler{Client: c, Live: c}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(pod)}); err != nil {
		t.Fatal(err)
	}
}

func newClient(objs ...client.Object) client.Client {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

func barrierData(t *testing.T, c client.Client, pod *corev1.Pod) (*corev1.ConfigMap, string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: pod.Namespace, Name: BarrierName(pod)}, cm); err != nil {
		return nil, err.Error()
	}
	var keys []string
	for _, k := range []string{"p_1", "p_0", "p_-1"} {
		if cm.Data[k] == "true" {
			keys = append(keys, k)
		}
	}
	return cm, strings.Join(keys, ",")
}

// The barrier is created owned by the pod, its next key added once the higher container is ready,
// and the pod marked completed after the last.
func TestReconcileReleases(t *testing.T) {
	pod := barrierPod(ints(1, 0))
	c := newClient(pod)
	reconcileOnce(t, c, pod)
	cm, keys := barrierData(t, c, pod)
	if keys != "p_1" || len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != pod.UID || cm.OwnerReferences[0].Kind != "Pod" {
		t.Fatalf("barrier %v after the first pass: %v", keys, cm)
	}
	pod.Status.ContainerStatuses[0].Ready = true
	if err := c.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, c, pod)
	if _, keys := barrierData(t, c, pod); keys != "p_1,p_0" {
		t.Fatalf("barrier %v once the first container is ready", keys)
	}
	got := &corev1.Pod{}
	_ = c.Get(context.Background(), client.ObjectKeyFromObject(pod), got)
	if got.Annotations[appspub.ContainerLaunchPriorityCompletedKey] != "true" {
		t.Errorf("pod annotations %v, want it completed", got.Annotations)
	}
}

// A ConfigMap of the barrier's name that no pod owns is never written; one an earlier pod of the
// same name left is deleted and made again.
func TestReconcileOwnership(t *testing.T) {
	pod := barrierPod(ints(1, 0))
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: BarrierName(pod)}, Data: map[string]string{"x": "y"}}
	c := newClient(pod, foreign)
	reconcileOnce(t, c, pod)
	if cm, _ := barrierData(t, c, pod); cm == nil || len(cm.Data) != 1 || cm.Data["x"] != "y" || len(cm.OwnerReferences) != 0 {
		t.Errorf("foreign ConfigMap written: %+v", cm)
	}

	stale := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: BarrierName(pod),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: "uid-0"}}},
		Data: map[string]string{"p_1": "true", "p_0": "true"}}
	c = newClient(pod, stale)
	reconcileOnce(t, c, pod)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(stale), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("stale barrier still there: %v", err)
	}
	reconcileOnce(t, c, pod)
	if cm, keys := barrierData(t, c, pod); keys != "p_1" || cm.OwnerReferences[0].UID != pod.UID {
		t.Errorf("barrier after replacing the stale one: %v %+v", keys, cm)
	}
}
