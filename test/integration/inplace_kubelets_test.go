package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/test/harness"
)

// One wait for a batch, learned per node, on a real API server with this test playing two
// kubelets: node-a's reports each pod not Ready once it sees the gate, node-b's never does. Each
// pod of node-a is written the moment its kubelet answered, none waits for node-b's; node-b's pods
// wait out the probe once, and the next update on node-b does not wait at all.
func TestEngineWaitsOnceAndLearnsNodes(t *testing.T) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	policy := inplace.DefaultKubeletPolicy()
	policy.Probe = 2 * time.Second
	eng := engine.New(harness.KruiseClient(t, cfg), nil, inplace.Options{},
		engine.WithKubelets(engine.NewKubelets(nil, nil, policy)))
	ns := podNamespace(t, cs, "kubelets-")
	status := func(name string, st map[string]any) *corev1.Pod {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"status": st})
		p, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	newPod := func(name, node string) *corev1.Pod {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{inplace.RevisionLabel: "rev-1"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "app:v1"}},
				ReadinessGates: []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}, TerminationGracePeriodSeconds: ptr.To[int64](1)}}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return status(name, map[string]any{
			"conditions": []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			"containerStatuses": []map[string]any{{"name": "app", "image": "app:v1", "imageID": "app@sha256:1", "ready": true,
				"restartCount": 0, "state": map[string]any{"running": map[string]any{}}}}})
	}
	old := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}
	newT := old.DeepCopy()
	newT.Spec.Containers[0].Image = "app:v2"
	d := eng.CanUpdateInPlace(old, newT, "rev-2")

	// node-a's kubelet: Ready False for every pod of node-a whose gate it sees False.
	stop := make(chan struct{})
	var kubelet sync.WaitGroup
	kubelet.Go(func() {
		answered := map[string]bool{}
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-a"})
			if err != nil {
				continue
			}
			for _, p := range pods.Items {
				if g := podCondition(&p, appspub.InPlaceUpdateReady); g != nil && g.Status == corev1.ConditionFalse && !answered[p.Name] {
					answered[p.Name] = true
					status(p.Name, map[string]any{"conditions": []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ReadinessGatesNotReady"}}})
				}
			}
		}
	})
	defer func() { close(stop); kubelet.Wait() }()

	var ups []engine.BatchUpdate
	for _, n := range []string{"a1", "a2", "a3", "b1", "b2"} {
		node := "node-a"
		if n[0] == 'b' {
			node = "node-b"
		}
		ups = append(ups, engine.BatchUpdate{Pod: newPod(n, node), Spec: d.Spec, Opts: engine.UpdateOptions{Reason: "image app:v2"}})
	}
	start := time.Now()
	var mu sync.Mutex
	took := map[string]time.Duration{}
	eng.UpdateAll(ctx, ups, 2, func(i int, err error) {
		if err != nil {
			t.Errorf("update %s: %v", ups[i].Pod.Name, err)
		}
		mu.Lock()
		took[ups[i].Pod.Name] = time.Since(start)
		mu.Unlock()
	})
	for _, n := range []string{"a1", "a2", "a3"} {
		if took[n] >= policy.Probe {
			t.Errorf("pod %s of the answering node written after %s: it waited for node-b's kubelet", n, took[n])
		}
	}
	for _, n := range []string{"b1", "b2"} {
		if took[n] < policy.Probe || took[n] > policy.Probe+5*time.Second {
			t.Errorf("pod %s of the silent node written after %s, want the probe's %s once", n, took[n], policy.Probe)
		}
	}
	// node-a's pods left Ready to their kubelet; node-b's, whose kubelet let the wait run out, were
	// taken out of their Services by the engine before their containers changed.
	for n, reason := range map[string]string{"a1": "ReadinessGatesNotReady", "b1": engine.StartReason} {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, n, metav1.GetOptions{})
		if err != nil || p.Spec.Containers[0].Image != "app:v2" {
			t.Errorf("pod %s not updated: %v", n, err)
			continue
		}
		if r := podCondition(p, corev1.PodReady); r == nil || r.Status != corev1.ConditionFalse || r.Reason != reason {
			t.Errorf("pod %s: Ready %s, want False by %s", n, fmt.Sprint(r), reason)
		}
	}

	// node-b learned silent: the next update there does not wait.
	b3 := newPod("b3", "node-b")
	start = time.Now()
	if err := eng.Update(ctx, b3, d.Spec, engine.UpdateOptions{Reason: "image app:v2"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("an update on the silent node took %s: it waited", d)
	}
	if p, err := cs.CoreV1().Pods(ns).Get(ctx, "b3", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if r := podCondition(p, corev1.PodReady); r == nil || r.Status != corev1.ConditionFalse || r.Reason != engine.StartReason {
		t.Errorf("b3 on the silent node: Ready %s, want False written by the engine with its gate", fmt.Sprint(r))
	}
	// node-a answers: its bound follows it, and a pod there still waits for its answer.
	a4 := newPod("a4", "node-a")
	if err := eng.Update(ctx, a4, d.Spec, engine.UpdateOptions{Reason: "image app:v2"}); err != nil {
		t.Fatal(err)
	}
	p, err := cs.CoreV1().Pods(ns).Get(ctx, "a4", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := podCondition(p, corev1.PodReady); r == nil || r.Reason != "ReadinessGatesNotReady" {
		t.Errorf("a4 written before its kubelet answered: Ready %s", fmt.Sprint(r))
	}
}
