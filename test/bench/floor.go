package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/client-go/util/flowcontrol"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// floorUser is the floor program's client identity, so the audit log counts its writes alone.
const floorUser = "kruise-bench-floor"

// floorWorkers is how many writes the floor program has in flight at once.
const floorWorkers = 64

// runFloor measures the in-place protocol with no controller: for every pod, as fast as the API
// server allows, InPlaceUpdateReady (and Ready) False, the spec patch the engine writes, and
// InPlaceUpdateReady True as soon as the fake kubelet reports the restarted container.
func runFloor(ctx context.Context, sb *sandbox.Sandbox, n int) (result, error) {
	kc, err := sb.KubeconfigFor(floorUser, "system:masters")
	if err != nil {
		return result{}, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		return result{}, err
	}
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter() // the API server's fairness is the only bound
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return result{}, err
	}
	nsObj, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-floor-"}}, metav1.CreateOptions{})
	if err != nil {
		return result{}, err
	}
	ns := nsObj.Name
	pods, err := floorPods(ctx, cs, ns, n)
	if err != nil {
		return result{}, err
	}
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return result{}, err
	}
	// A retrying watch: with 64 writes in flight on the same connection, a plain watch may end early.
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().Pods(ns).Watch(ctx, o)
		},
	})
	if err != nil {
		return result{}, err
	}
	defer w.Stop()
	return measure(sb, "floor", floorUser, n, os.Getpid(), isUser(floorUser), func() error {
		return floorRollout(ctx, cs, ns, pods, w)
	})
}

// floorPods creates n running pods with the InPlaceUpdateReady gate open (not measured).
func floorPods(ctx context.Context, cs kubernetes.Interface, ns string, n int) ([]*corev1.Pod, error) {
	pods := make([]*corev1.Pod, n)
	err := parallel(n, func(i int) error {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("floor-%d", i), Labels: map[string]string{inplace.RevisionLabel: "v1"}},
			Spec: podSpec(image("v1"))}
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
		_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		open, err := inplace.OpenPatch("BenchCreated", time.Now(), appspub.InPlaceUpdateReady)
		if err != nil {
			return err
		}
		_, err = cs.CoreV1().Pods(ns).Patch(ctx, p.Name, types.StrategicMergePatchType, open, metav1.PatchOptions{}, "status")
		return err
	})
	if err != nil {
		return nil, err
	}
	err = poll(ctx, fmt.Sprintf("%d floor pods Ready", n), func() (bool, error) {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for i := range list.Items {
			p := &list.Items[i]
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && len(p.Status.ContainerStatuses) == 1 {
					var idx int
					if _, err := fmt.Sscanf(p.Name, "floor-%d", &idx); err == nil && idx < n {
						pods[idx] = p
						ready++
					}
				}
			}
		}
		return ready == n, nil
	})
	return pods, err
}

// floorRollout does the protocol's three writes per pod; the third once the watch shows the
// container restarted on the new image.
func floorRollout(ctx context.Context, cs kubernetes.Interface, ns string, pods []*corev1.Pod, w watch.Interface) error {
	oldImageID := map[string]string{}
	for _, p := range pods {
		oldImageID[p.Name] = p.Status.ContainerStatuses[0].ImageID
	}
	spec := &inplace.UpdateSpec{Revision: "v2", ContainerImages: map[string]string{"app": image("v2")}}
	var firstErr atomic.Value
	fail := func(err error) {
		if err != nil {
			firstErr.CompareAndSwap(nil, err)
		}
	}
	go func() {
		fail(parallel(len(pods), func(i int) error {
			p := pods[i]
			gate, err := inplace.ConditionPatch(appspub.InPlaceUpdateReady, corev1.ConditionFalse, "StartInPlaceUpdate", "", time.Now())
			if err != nil {
				return err
			}
			if _, err := cs.CoreV1().Pods(ns).Patch(ctx, p.Name, types.StrategicMergePatchType, gate, metav1.PatchOptions{}, "status"); err != nil {
				return err
			}
			state := &appspub.InPlaceUpdateState{Revision: "v2", UpdateImages: true,
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"app": {ImageID: oldImageID[p.Name]}}}
			body, err := inplace.SpecPatch(p, spec, state, inplace.Options{PodTemplateHash: true}.RevisionLabels(spec.Revision))
			if err != nil {
				return err
			}
			_, err = cs.CoreV1().Pods(ns).Patch(ctx, p.Name, types.JSONPatchType, body, metav1.PatchOptions{})
			return err
		}))
	}()
	// Open each pod's gate as soon as its restart shows, with floorWorkers writes in flight.
	opened := map[string]bool{}
	sem := make(chan struct{}, floorWorkers)
	var wg sync.WaitGroup
	for len(opened) < len(pods) {
		if err, _ := firstErr.Load().(error); err != nil {
			return err
		}
		var ev watch.Event
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("the pod watch ended with %d of %d pods done", len(opened), len(pods))
			}
			ev = e
		case <-time.After(time.Second):
			continue // check for a failed write
		case <-ctx.Done():
			return ctx.Err()
		}
		if ev.Type == watch.Error {
			return fmt.Errorf("the pod watch failed: %v", ev.Object)
		}
		p, isPod := ev.Object.(*corev1.Pod)
		if !isPod || opened[p.Name] || len(p.Status.ContainerStatuses) != 1 {
			continue
		}
		st := p.Status.ContainerStatuses[0]
		if st.ImageID == oldImageID[p.Name] || st.State.Running == nil || p.Spec.Containers[0].Image != image("v2") {
			continue
		}
		opened[p.Name] = true
		wg.Add(1)
		sem <- struct{}{}
		go func(name string) {
			defer func() { <-sem; wg.Done() }()
			open, err := inplace.OpenPatch("InPlaceUpdated", time.Now(), appspub.InPlaceUpdateReady)
			if err == nil {
				_, err = cs.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, open, metav1.PatchOptions{}, "status")
			}
			fail(err)
		}(p.Name)
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	return nil
}

// parallel runs fn(0..n-1) with floorWorkers at once and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for range floorWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}
