package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
)

// floorUser is the floor program's client identity, so the audit log counts its writes alone.
const floorUser = "kruise-bench-floor"

// floorWorkers is how many writes the floor program has in flight at once.
const floorWorkers = 64

// floorScenarios are the floor's rollouts, each of its own n pods: at maxUnavailable 100% every pod
// at once; at 20% a sliding window of ceil(20% of n) pods in flight, the next pod starting as one
// in flight completes (what a controller at maxUnavailable 20% can at best do).
var floorScenarios = []floorScenario{{"floor-maxu20", intstr.FromString("20%")}, {"floor-maxu100", intstr.FromString("100%")}}

type floorScenario struct {
	name           string
	maxUnavailable intstr.IntOrString
}

// floorsNamed are the floorScenarios named, in their order (all of them without names); a name
// none has is an error, not a floor silently skipped.
func floorsNamed(names []string) ([]floorScenario, error) {
	if len(names) == 0 {
		return floorScenarios, nil
	}
	var out []floorScenario
	for _, s := range floorScenarios {
		if slices.Contains(names, s.name) {
			out = append(out, s)
		}
	}
	for _, name := range names {
		if !slices.ContainsFunc(out, func(s floorScenario) bool { return s.name == name }) {
			return nil, fmt.Errorf("no floor scenario %q", name)
		}
	}
	return out, nil
}

// floorWindow is how many of n pods a rollout at maxUnavailable may have in flight: maxUnavailable
// of n rounded up, as the controllers count it, and at least one.
func floorWindow(n int, maxUnavailable intstr.IntOrString) (int, error) {
	w, err := intstr.GetScaledValueFromIntOrPercent(&maxUnavailable, n, true)
	return max(w, 1), err
}

// runFloor measures the in-place protocol with no controller (floorScenarios), each scenario in a
// namespace of its own deleted after it: for every pod, as fast as the API server and the
// scenario's window allow, InPlaceUpdateReady False, then, once the node's kubelet has written
// Ready False itself (the kubelets of both profiles report a gate's change), the spec patch the
// engine writes, and InPlaceUpdateReady True as soon as the fake kubelet reports the restarted
// container. names, when given, narrows it to those scenarios.
func runFloor(ctx context.Context, sb *sandbox.Sandbox, n int, names ...string) ([]result, error) {
	scenarios, err := floorsNamed(names)
	if err != nil {
		return nil, err
	}
	cs, err := floorClientset(sb)
	if err != nil {
		return nil, err
	}
	c, err := benchClient(sb)
	if err != nil {
		return nil, err
	}
	var out []result
	for _, s := range scenarios {
		r, err := runFloorScenario(ctx, sb, cs, c, s.name, n, s.maxUnavailable, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// unlimitedConfig is a client configuration of the bench's own identity user (so the audit log
// counts its writes alone) with no client rate limit: the API server's fairness is the only bound.
func unlimitedConfig(sb *sandbox.Sandbox, user string, warn rest.WarningHandler) (*rest.Config, error) {
	kc, err := sb.KubeconfigFor(user, "system:masters")
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		return nil, err
	}
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	cfg.WarningHandler = warn
	return cfg, nil
}

// floorClientset is the floor program's client (unlimitedConfig).
func floorClientset(sb *sandbox.Sandbox) (kubernetes.Interface, error) {
	cfg, err := unlimitedConfig(sb, floorUser, nil)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// runFloorScenario measures scenario: the protocol on n new pods, as many in flight at most as
// maxUnavailable of n allows (floorWindow), in a namespace of its own deleted after it; place, when
// set, puts pod i where it runs (the scheduler does otherwise).
func runFloorScenario(ctx context.Context, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client, scenario string, n int,
	maxUnavailable intstr.IntOrString, place func(i int, spec *corev1.PodSpec)) (result, error) {
	window, err := floorWindow(n, maxUnavailable)
	if err != nil {
		return result{}, err
	}
	ns, err := namespace(ctx, c, "bench-floor")
	if err != nil {
		return result{}, err
	}
	r, err := floorIn(ctx, sb, cs, ns, scenario, n, window, place)
	if err != nil {
		return result{}, err
	}
	return r, deleteNamespace(ctx, c, ns)
}

// floorIn measures scenario on n new pods of ns, window of them in flight at most.
func floorIn(ctx context.Context, sb *sandbox.Sandbox, cs kubernetes.Interface, ns, scenario string, n, window int,
	place func(i int, spec *corev1.PodSpec)) (result, error) {
	pods, err := floorPods(ctx, cs, ns, n, place)
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
	var wait *kubeletWait
	r, err := measure(sb, scenario, floorUser, n, os.Getpid(), isUser(floorUser), func() error {
		var err error
		wait, err = floorRollout(ctx, cs, ns, pods, w, window)
		return err
	})
	r.KubeletWait = wait // the floor's own wait; the manager has nothing to do with its pods
	return r, err
}

// floorPods creates n running pods with the InPlaceUpdateReady gate open (not measured), each
// placed by place when set.
func floorPods(ctx context.Context, cs kubernetes.Interface, ns string, n int, place func(i int, spec *corev1.PodSpec)) ([]*corev1.Pod, error) {
	pods := make([]*corev1.Pod, n)
	err := parallel(n, func(i int) error {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("floor-%d", i), Labels: map[string]string{inplace.RevisionLabel: "v1"}},
			Spec: podSpec(image("v1"))}
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
		if place != nil {
			place(i, &p.Spec)
		}
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

// floorRollout does the protocol's writes per pod: InPlaceUpdateReady False (Ready is the
// kubelet's to write); once the watch shows the kubelet's own Ready False, the spec patch (or, when
// floorWaitBound passes first, as the engine's wait for a node not heard from, Ready False and then
// the spec patch); and InPlaceUpdateReady True once the watch shows the container restarted on the
// new image. Both profiles' kubelets report a gate's change. A pod is done when the watch shows its
// kubelet's Ready True after that, as a controller counts it available. At most window pods are in
// flight (from the hold written to Ready again), and at most floorWorkers writes.
func floorRollout(ctx context.Context, cs kubernetes.Interface, ns string, pods []*corev1.Pod, w watch.Interface,
	window int) (*kubeletWait, error) {
	ctx, cancel := context.WithCancel(ctx) // on an error, the pods not started yet stay so
	defer cancel()
	oldImageID := map[string]string{}
	byName := map[string]*corev1.Pod{}
	for _, p := range pods {
		oldImageID[p.Name] = p.Status.ContainerStatuses[0].ImageID
		byName[p.Name] = p
	}
	spec := &inplace.UpdateSpec{Revision: "v2", ContainerImages: map[string]string{"app": image("v2")}}
	var firstErr atomic.Value
	fail := func(err error) {
		if err != nil {
			firstErr.CompareAndSwap(nil, err)
		}
	}
	sem := make(chan struct{}, floorWorkers)
	var wg sync.WaitGroup
	// write runs one write with floorWorkers in flight at most.
	write := func(f func() error) {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fail(f())
		}()
	}
	specPatch := func(p *corev1.Pod) error {
		state := &appspub.InPlaceUpdateState{Revision: "v2", UpdateImages: true,
			LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"app": {ImageID: oldImageID[p.Name]}}}
		body, err := inplace.SpecPatch(p, spec, state, inplace.Options{PodTemplateHash: true}.RevisionLabels(spec.Revision))
		if err != nil {
			return err
		}
		_, err = cs.CoreV1().Pods(ns).Patch(ctx, p.Name, types.JSONPatchType, body, metav1.PatchOptions{})
		return err
	}
	// inFlight holds a slot per pod from its hold until it is Ready again.
	inFlight := make(chan struct{}, window)
	go func() {
		for _, p := range pods {
			select {
			case inFlight <- struct{}{}:
			case <-ctx.Done():
				return
			}
			write(func() error {
				gate, err := inplace.GatePatch(appspub.InPlaceUpdateReady, floorHoldReason, "", time.Now())
				if err != nil {
					return err
				}
				_, err = cs.CoreV1().Pods(ns).Patch(ctx, p.Name, types.StrategicMergePatchType, gate, metav1.PatchOptions{}, "status")
				return err // the watch starts the spec patch
			})
		}
	}()
	wait := &kubeletWait{Floor: true}
	var answers []time.Duration
	held := map[string]time.Time{} // when the watch first showed the hold, until the spec patch starts
	patched, opened := map[string]bool{}, map[string]bool{}
	release := func(name string, answered bool) {
		if answered {
			answers = append(answers, time.Since(held[name]))
		} else {
			wait.Timeouts++
		}
		delete(held, name)
		patched[name] = true
		write(func() error {
			if !answered {
				ready, err := inplace.ReadyPatch(floorHoldReason, "", time.Now())
				if err != nil {
					return err
				}
				if _, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, ready, metav1.PatchOptions{}, "status"); err != nil {
					return err
				}
			}
			return specPatch(byName[name])
		})
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	available := map[string]bool{}
	for len(available) < len(pods) {
		if err, _ := firstErr.Load().(error); err != nil {
			return nil, err
		}
		var ev watch.Event
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				return nil, fmt.Errorf("the pod watch ended with %d of %d pods done", len(available), len(pods))
			}
			ev = e
		case <-tick.C:
			for name, t := range held {
				if time.Since(t) >= floorWaitBound {
					release(name, false)
				}
			}
			continue
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if ev.Type == watch.Error {
			return nil, fmt.Errorf("the pod watch failed: %v", ev.Object)
		}
		p, isPod := ev.Object.(*corev1.Pod)
		if !isPod || byName[p.Name] == nil || available[p.Name] || len(p.Status.ContainerStatuses) != 1 {
			continue
		}
		if opened[p.Name] {
			// The pod counts as updated, and its slot frees, once its kubelet reports it Ready
			// again: what a controller's maxUnavailable and its rollout's end wait for.
			if inplace.ConditionIs(p, corev1.PodReady, corev1.ConditionTrue) {
				available[p.Name] = true
				<-inFlight
			}
			continue
		}
		if !patched[p.Name] {
			if _, ok := held[p.Name]; !ok && inplace.GateFalse(p) { // the floor's hold shows: InPlaceUpdateReady False
				held[p.Name] = time.Now()
			}
			if _, ok := held[p.Name]; ok && engine.KubeletNotReady(p) {
				release(p.Name, true)
			}
			continue
		}
		st := p.Status.ContainerStatuses[0]
		if st.ImageID == oldImageID[p.Name] || st.State.Running == nil || p.Spec.Containers[0].Image != image("v2") {
			continue
		}
		opened[p.Name] = true
		write(func() error {
			open, err := inplace.OpenPatch("InPlaceUpdated", time.Now(), appspub.InPlaceUpdateReady)
			if err != nil {
				return err
			}
			_, err = cs.CoreV1().Pods(ns).Patch(ctx, p.Name, types.StrategicMergePatchType, open, metav1.PatchOptions{}, "status")
			return err
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return nil, err
	}
	wait.Answers = len(answers)
	if len(answers) > 0 {
		wait.AnswerP50Ms, wait.AnswerP99Ms = percentileMs(answers, 0.5), percentileMs(answers, 0.99)
	}
	return wait, nil
}

// floorHoldReason is the reason of the floor's InPlaceUpdateReady (and Ready) False, the engine's.
const floorHoldReason = engine.StartReason

// floorWaitBound is the engine's longest wait for a kubelet (a node not heard from yet).
var floorWaitBound = inplace.DefaultKubeletPolicy().Probe

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
