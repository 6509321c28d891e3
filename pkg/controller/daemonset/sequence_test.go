package daemonset

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/updateorder"
	"github.com/kruise-ng/kruise/pkg/platform/seqsim"
)

// world is a simulated cluster in a seeded history (h): nodes with daemon pods that start, become
// ready, update in place and terminate in a random order.
type world struct {
	h     *seqsim.History
	nodes []NodeFacts
	seq   int
}

// snapshot is what observe would build: with the current revision of the old pods, if any.
func (w *world) snapshot(s v1beta1.DaemonSetSpec) *Snapshot {
	ns := make([]NodeFacts, len(w.nodes))
	current := ""
	for i, n := range w.nodes {
		ns[i] = n
		ns[i].Pods = append([]PodFacts(nil), n.Pods...)
		for _, pod := range n.Pods {
			if pod.live() && pod.Revision == revOld {
				current = revOld
			}
		}
	}
	snap := snapshot(s, ns)
	snap.CurrentRevision = current
	snap.RollBack = inplace.Decision{Spec: &inplace.UpdateSpec{Revision: revOld}}
	return snap
}

func (w *world) find(name string) (*NodeFacts, int) {
	for i := range w.nodes {
		for j := range w.nodes[i].Pods {
			if w.nodes[i].Pods[j].Name == name {
				return &w.nodes[i], j
			}
		}
	}
	return nil, -1
}

// apply carries out the plan: creates add starting pods, deletes and recreates start termination,
// in-place updates change the revision and leave the pod updating.
func (w *world) apply(p Plan) {
	for _, c := range p.Creates {
		for i := range w.nodes {
			if w.nodes[i].Name == c.Node {
				w.seq++
				w.nodes[i].Pods = append(w.nodes[i].Pods, PodFacts{Name: fmt.Sprintf("pod-%d", w.seq), Revision: c.Revision,
					Created: w.h.Now().Add(time.Duration(w.seq) * time.Millisecond)})
				w.nodes[i].Pods[len(w.nodes[i].Pods)-1].Phase = corev1.PodPending
			}
		}
	}
	for _, d := range p.Deletes {
		if n, j := w.find(d.Pod); n != nil {
			n.Pods[j].Terminating, n.Pods[j].Ready = true, false
		}
	}
	for _, u := range p.Updates {
		n, j := w.find(u.Pod)
		if n == nil {
			continue
		}
		if u.Mode == UpdateRecreate {
			n.Pods[j].Terminating, n.Pods[j].Ready = true, false
			continue
		}
		n.Pods[j].Revision, n.Pods[j].InPlaceUpdating, n.Pods[j].Ready = u.Spec.Revision, true, false
	}
}

// step moves the cluster on, the clock having advanced: random pods start, become ready, finish
// updating or go away.
func (w *world) step() {
	for i := range w.nodes {
		pods := w.nodes[i].Pods[:0]
		for _, pod := range w.nodes[i].Pods {
			if w.h.Rand().IntN(3) == 0 {
				switch {
				case pod.Terminating:
					continue
				case pod.Phase == corev1.PodPending:
					pod.Phase = corev1.PodRunning
				case pod.InPlaceUpdating:
					pod.InPlaceUpdating, pod.Ready, pod.ReadySince = false, true, w.h.Now()
				case !pod.Ready:
					pod.Ready, pod.ReadySince = true, w.h.Now()
				}
			}
			pods = append(pods, pod)
		}
		w.nodes[i].Pods = pods
	}
}

// uncanary takes a random canary node out of the selector, when an unselected node runs an old
// pod (the revision it goes back to).
func (w *world) uncanary(canary map[string]bool) {
	old := false
	for _, n := range w.nodes {
		for _, pod := range n.Pods {
			old = old || (!canary[n.Name] && pod.live() && pod.Revision == revOld)
		}
	}
	var names []string
	for i := range w.nodes {
		if canary[w.nodes[i].Name] {
			names = append(names, w.nodes[i].Name)
		}
	}
	if !old || len(names) == 0 {
		return
	}
	name := names[w.h.Rand().IntN(len(names))]
	for i := range w.nodes {
		if w.nodes[i].Name == name {
			w.nodes[i].Labels = nil
		}
	}
	delete(canary, name)
}

// unavailable counts the eligible nodes with no available live pod.
func (w *world) unavailable(minReady time.Duration) int {
	n := 0
	for _, node := range w.nodes {
		ok := false
		for _, pod := range node.Pods {
			ok = ok || (pod.live() && pod.Available(w.h.Now(), minReady))
		}
		if !ok {
			n++
		}
	}
	return n
}

// TestPlanSequences runs rollouts of random shapes to the end, in a random order of events, and
// checks the invariants of doc.go after every plan.
func TestPlanSequences(t *testing.T) {
	seqsim.Sequence{Seeds: seqsim.Seeds{First: 1, Count: 300}, Start: t0, Tick: seqsim.Seconds(1, 5)}.Run(t, func(h *seqsim.History) {
		r := newRollout(h)
		h.Steps(400, r.step)
		r.checkEnd()
	})
}

// rollout is the rollout of one history: its world, its spec and the bounds the spec sets.
type rollout struct {
	h                                      *seqsim.History
	w                                      *world
	s                                      v1beta1.DaemonSetSpec
	canary                                 map[string]bool
	size, surge, maxUnavailable, partition int
	minReady                               time.Duration
	sel                                    labels.Selector
}

// newRollout draws a rollout's shape: nodes, some canaries, and the rolling update.
func newRollout(h *seqsim.History) *rollout {
	rng := h.Rand()
	size := 1 + rng.IntN(8)
	r := &rollout{h: h, w: &world{h: h, nodes: nodes(size, revOld)}, canary: map[string]bool{}, size: size}
	for i := range r.w.nodes {
		if rng.IntN(2) == 0 {
			r.w.nodes[i].Labels = map[string]string{"canary": "true"}
			r.canary[r.w.nodes[i].Name] = true
		}
	}
	r.s = spec(func(ru *v1beta1.DaemonSetRollingUpdate) {
		ru.MaxUnavailable = intOrStr(fmt.Sprint(rng.IntN(3)))
		if rng.IntN(3) == 0 {
			ru.MaxSurge = intOrStr(fmt.Sprint(1 + rng.IntN(2)))
		} else if ru.MaxUnavailable.IntValue() == 0 {
			ru.MaxUnavailable = intOrStr("1")
		}
		if rng.IntN(2) == 0 {
			ru.Type = v1beta1.DaemonSetInplaceRollingUpdateType
		}
		if rng.IntN(3) == 0 {
			ru.Partition = intOrStr(fmt.Sprint(rng.IntN(size + 1)))
		}
		if rng.IntN(4) == 0 {
			ru.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
		}
	})
	if rng.IntN(3) == 0 {
		r.s.MinReadySeconds = int32(rng.IntN(10))
	}
	ru := r.s.UpdateStrategy.RollingUpdate
	r.surge = scaled(ru.MaxSurge, size, 0)
	r.maxUnavailable = scaled(ru.MaxUnavailable, size, 1)
	r.minReady = time.Duration(r.s.MinReadySeconds) * time.Second
	r.partition = updateorder.Partition(ru.Partition, size)
	r.sel, _ = metav1.LabelSelectorAsSelector(ru.Selector)
	h.Logf("%d nodes (canaries %v), %s, maxUnavailable %d, maxSurge %d, partition %d, minReady %s",
		size, r.canary, ru.Type, r.maxUnavailable, r.surge, r.partition, r.minReady)
	return r
}

// step lets the cluster move on, plans, checks the plan and applies it.
func (r *rollout) step() bool {
	w, ru := r.w, r.s.UpdateStrategy.RollingUpdate
	w.step()
	if r.h.Step() == 150 && ru.Selector != nil {
		w.uncanary(r.canary) // kruise#1871: the node goes back to the old revision
		r.h.Logf("canaries now %v", r.canary)
	}
	before := w.unavailable(r.minReady)
	p := Compute(w.snapshot(r.s), r.h.Now())
	for _, u := range p.Updates {
		n, j := w.find(u.Pod)
		// Outside the selector only a roll back: from the new revision, to the old one.
		back := (u.Mode == UpdateRecreate || u.Spec.Revision == revOld) && n.Pods[j].Revision == revNew
		if ru.Selector != nil && !r.sel.Matches(labels.Set(n.Labels)) && !back {
			r.h.Fatalf("updated %s on node %s outside the selector", u.Pod, n.Name)
		}
	}
	w.apply(p)
	r.h.Logf("plan: %d creates, %d deletes, %d updates", len(p.Creates), len(p.Deletes), len(p.Updates))
	for _, node := range w.nodes {
		live := 0
		for _, pod := range node.Pods {
			if pod.live() {
				live++
			}
		}
		if live > 1 && (r.surge == 0 || live > 2) {
			r.h.Fatalf("node %s runs %d live daemon pods (maxSurge %d)", node.Name, live, r.surge)
		}
	}
	if after := w.unavailable(r.minReady); r.surge == 0 && after > max(before, r.maxUnavailable) {
		r.h.Fatalf("%d nodes unavailable after the plan, %d before, maxUnavailable %d", after, before, r.maxUnavailable)
	}
	if r.surge > 0 && len(p.Updates) > 0 {
		r.h.Fatalf("a surge update updated pods %+v", p.Updates)
	}
	return false
}

// checkEnd asserts where the rollout ends: the nodes the partition and the selector leave to the
// update run it, no other.
func (r *rollout) checkEnd() {
	updatedNodes, eligible := 0, 0
	selector := r.s.UpdateStrategy.RollingUpdate.Selector
	for _, node := range r.w.nodes {
		if selector == nil || r.canary[node.Name] {
			eligible++
		}
		for _, pod := range node.Pods {
			if pod.live() && pod.Revision == revNew {
				updatedNodes++
				if selector != nil && !r.canary[node.Name] {
					r.h.Fatalf("node %s outside the selector was updated", node.Name)
				}
			}
		}
	}
	if want := min(eligible, r.size-r.partition); updatedNodes != want {
		r.h.Fatalf("%d nodes updated at the end, want %d (size %d, partition %d, eligible %d)", updatedNodes, want, r.size, r.partition, eligible)
	}
}
