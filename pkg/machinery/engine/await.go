package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/podgate"
)

// notReadyPoll is how often the wait looks at the pods it waits for (in the informer cache, for a
// manager).
const notReadyPoll = 20 * time.Millisecond

var notReadyTimeouts = prometheus.NewCounter(prometheus.CounterOpts{Name: "kruise_inplace_not_ready_wait_timeouts_total",
	Help: "In-place updates whose containers changed before the kubelet reported the pod not Ready: its node's wait (learned per node, at most 10 s) ran out. Nodes whose kubelet does not answer are not waited for (kruise_inplace_node_kubelet_silent)."})

func init() { metrics.Registry.MustRegister(notReadyTimeouts) }

// awaitKubelets waits, once for all of pods (taken out of service: Unready), for each pod's kubelet
// to write its Ready condition False itself, and calls release(i, err) for pods[i] the moment it
// may go on: its kubelet answered, its node's wait ran out (KubeletPolicy.WaitDeadline: the
// node's bound from the wait's start, or from its kubelet's latest answer), its node is not
// waited for (Kubelets), or it needs no wait (no InPlaceUpdateReady readiness gate, not on a node,
// answered already). No pod waits for another's kubelet. A pod released without its kubelet's answer is taken out of its
// Services by the engine (Ready False) unless it was already. It learns from each node's answers
// and returns once every pod is released; err is set for a pod replaced meanwhile, one whose Ready
// could not be written, or when ctx ends.
//
// The kubelet reconciles Ready when it sees the gate's change; until then its cached status still
// says Ready, which is why the engine leaves Ready to it where it answers: a Ready False the
// engine wrote could be overwritten by a status write of the kubelet's cached Ready -- seen on a
// real kubelet while the containers were already restarting -- putting the pod back in its
// Services.
func (e *engine) awaitKubelets(ctx context.Context, pods []*corev1.Pod, release func(i int, err error)) {
	// The wait runs on the wall clock (kubelets answer in real time); how long a pod was held
	// before it is read from the engine's clock.
	type waiting struct {
		i    int
		held time.Duration // held this long when the wait began (for the answer's latency)
	}
	type nodeWait struct {
		d          inplace.WaitDecision
		answered   []time.Duration
		lastAnswer time.Time // wall clock: its kubelet's latest answer in this wait
		missed     string    // a pod it let run out
		pending    int
	}
	now, start := e.clock.Now(), time.Now()
	nodes := map[string]*nodeWait{}
	var pending []waiting
	for i, pod := range pods {
		node := pod.Spec.NodeName
		if !podgate.Has(pod, appspub.InPlaceUpdateReady) || KubeletNotReady(pod) || node == "" {
			release(i, nil)
			continue
		}
		nw := nodes[node]
		if nw == nil {
			nw = &nodeWait{d: e.kubelets.Decide(ctx, node, now)}
			nodes[node] = nw
		}
		if !nw.d.Wait {
			release(i, e.outOfService(ctx, pod))
			continue
		}
		// The bound runs from the wait's start, whenever the pod was taken out: under a large
		// batch the kubelet sees the last gates later than the first, and a pod taken out first
		// would otherwise have spent its bound while the others were being taken out. Its answer's
		// latency counts from its hold.
		held := max(now.Sub(heldSince(pod, now)), 0)
		nw.pending++
		pending = append(pending, waiting{i: i, held: held})
	}
	done := func(node string) {
		nw := nodes[node]
		if nw.pending--; nw.pending == 0 {
			e.kubelets.Record(ctx, node, nw.d, nw.answered, nw.missed != "", nw.missed, e.clock.Now())
		}
	}
	tick := time.NewTicker(notReadyPoll)
	defer tick.Stop()
	for len(pending) > 0 {
		now := time.Now()
		rest := pending[:0]
		for _, w := range pending {
			pod := pods[w.i]
			node := pod.Spec.NodeName
			answered, err := e.answered(ctx, pod)
			switch {
			case err != nil:
				release(w.i, err)
				done(node)
			case answered:
				nodes[node].answered = append(nodes[node].answered, w.held+now.Sub(start))
				nodes[node].lastAnswer = now
				release(w.i, nil)
				done(node)
			case !now.Before(e.kubelets.policy.WaitDeadline(start, nodes[node].d, nodes[node].lastAnswer)):
				notReadyTimeouts.Inc()
				nodes[node].missed = pod.Namespace + "/" + pod.Name
				release(w.i, e.outOfService(ctx, pod))
				done(node)
			default:
				rest = append(rest, w)
			}
		}
		pending = rest
		if len(pending) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			for _, w := range pending {
				release(w.i, ctx.Err())
			}
			return
		case <-tick.C:
		}
	}
}

// outOfService makes sure a pod its kubelet did not report not Ready (its node is not waited for,
// or the wait ran out) is out of its Services before its containers change: Ready False, written
// by the engine unless it did so already when it took the pod out (pod is as held).
func (e *engine) outOfService(ctx context.Context, pod *corev1.Pod) error {
	if !inplace.ConditionIs(pod, corev1.PodReady, corev1.ConditionTrue) {
		return nil
	}
	return e.setReady(ctx, pod, "the kubelet did not report the pod not Ready")
}

// answered reports whether the pod's kubelet has reported it not Ready, read through the engine's
// client (the manager's cache). A pod gone counts as answered (its spec write says so); a pod
// replaced under its name is an error. Any other failed read (a client rate limiter that would
// outlast the wait, a blip) is no answer yet.
func (e *engine) answered(ctx context.Context, pod *corev1.Pod) (bool, error) {
	// The cache's own pod, not a copy per poll: only its conditions are read.
	cur := &corev1.Pod{}
	if err := e.client.Get(ctx, client.ObjectKeyFromObject(pod), cur, client.UnsafeDisableDeepCopy); err != nil {
		return apierrors.IsNotFound(err), nil
	}
	if cur.UID != pod.UID {
		return false, fmt.Errorf("update pod %s in place: the pod was replaced", pod.Name)
	}
	return KubeletNotReady(cur), nil
}

// heldSince is when the pod was taken out of service: its InPlaceUpdateReady condition's
// transition to False as the engine wrote it; now when unknown.
func heldSince(pod *corev1.Pod, now time.Time) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == appspub.InPlaceUpdateReady && c.Status == corev1.ConditionFalse && c.Reason == StartReason && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return now
}

// KubeletNotReady reports whether the pod's Ready condition is not True, and not as the engine
// wrote it (StartReason): the kubelet's answer the engine waits for.
func KubeletNotReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status != corev1.ConditionTrue && c.Reason != StartReason
		}
	}
	return true
}
