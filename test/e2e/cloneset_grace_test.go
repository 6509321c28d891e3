package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// inPlaceUpdateStrategy.gracePeriodSeconds: each pod is NotReady for the grace period before its
// image changes, and the delay lives on the pod: a manager killed during the grace period is
// replaced by one that applies the update when the period ends, not before and not never.
func TestCloneSetGracePeriodSurvivesManagerCrash(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas, grace = 4, 6
	clone := newCloneSet(ns, "grace", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	clone.Spec.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: grace}
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "grace", "all ready", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.ReadyReplicas == replicas })
	before := podsByName(t, ns, "app=grace")

	seen := watchGraceTimes(t, ns, "app=grace")
	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	// Crash the manager as soon as the first pods wait out their grace period.
	var waiting []string
	deadline := time.Now().Add(30 * time.Second)
	for len(waiting) == 0 && time.Now().Before(deadline) {
		for name, p := range podsByName(t, ns, "app=grace") {
			if p.Annotations[appspub.InPlaceUpdateGraceKey] != "" && p.Spec.Containers[0].Image == "registry.example/app:v1" {
				waiting = append(waiting, name)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(waiting) == 0 {
		t.Fatal("no pod was seen waiting out its grace period")
	}
	if err := sb.CrashKruiseManager(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("manager killed while %v waited out the grace period", waiting)
	waitCloneSet(t, c, ns, "grace", "rolled out by the new manager", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ObservedGeneration == cs.Generation && cs.Status.UpdatedReadyReplicas == replicas && cs.Status.ReadyReplicas == replicas
	})
	after := podsByName(t, ns, "app=grace")
	times := seen()
	for name, p := range after {
		if b, ok := before[name]; !ok || b.UID != p.UID {
			t.Errorf("pod %s was recreated", name)
		}
		if st := p.Status.ContainerStatuses[0]; st.RestartCount != 1 || p.Spec.Containers[0].Image != "registry.example/app:v2" {
			t.Errorf("pod %s: %s", name, describe(p))
		}
		if _, ok := p.Annotations[appspub.InPlaceUpdateGraceKey]; ok {
			t.Errorf("pod %s still carries %s", name, appspub.InPlaceUpdateGraceKey)
		}
		tt := times[name]
		if tt.notReady.IsZero() || tt.patched.IsZero() {
			t.Errorf("pod %s: not ready seen at %v, image patched seen at %v", name, tt.notReady, tt.patched)
			continue
		}
		if d := tt.patched.Sub(tt.notReady); d < (grace-1)*time.Second {
			t.Errorf("pod %s: image changed %.1fs after it went NotReady; want the grace period of %ds", name, d.Seconds(), grace)
		}
	}
}

type graceTimes struct{ notReady, patched time.Time }

// watchGraceTimes polls the pods every 100 ms and records, per pod, when it was first seen NotReady
// with its old image and when its new image was first seen.
func watchGraceTimes(t *testing.T, ns, selector string) func() map[string]graceTimes {
	var mu sync.Mutex
	out := map[string]graceTimes{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			list, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				continue
			}
			now := time.Now()
			mu.Lock()
			for _, p := range list.Items {
				tt := out[p.Name]
				old := p.Spec.Containers[0].Image == "registry.example/app:v1"
				if old && tt.notReady.IsZero() && condition(&p, corev1.PodReady) == corev1.ConditionFalse {
					tt.notReady = now
				}
				if !old && tt.patched.IsZero() {
					tt.patched = now
				}
				out[p.Name] = tt
			}
			mu.Unlock()
		}
	}()
	var once sync.Once
	finish := func() { once.Do(func() { close(stop); <-done }) }
	t.Cleanup(finish)
	return func() map[string]graceTimes {
		finish()
		mu.Lock()
		defer mu.Unlock()
		return out
	}
}
