package daemonset

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/updateorder"
)

// world is a simulated cluster: nodes with daemon pods that start, become ready, update in place
// and terminate in a seeded random order.
type world struct {
	rng   *rand.Rand
	now   time.Time
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
					Created: w.now.Add(time.Duration(w.seq) * time.Millisecond)})
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

// step lets time pass: random pods start, become ready, finish updating or go away.
func (w *world) step() {
	w.now = w.now.Add(time.Duration(1+w.rng.Intn(5)) * time.Second)
	for i := range w.nodes {
		pods := w.nodes[i].Pods[:0]
		for _, pod := range w.nodes[i].Pods {
			if w.rng.Intn(3) == 0 {
				switch {
				case pod.Terminating:
					continue
				case pod.Phase == corev1.PodPending:
					pod.Phase = corev1.PodRunning
				case pod.InPlaceUpdating:
					pod.InPlaceUpdating, pod.Ready, pod.ReadySince = false, true, w.now
				case !pod.Ready:
					pod.Ready, pod.ReadySince = true, w.now
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
	name := names[w.rng.Intn(len(names))]
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
			ok = ok || (pod.live() && pod.Available(w.now, minReady))
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
	for seed := int64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewSource(seed))
		size := 1 + rng.Intn(8)
		w := &world{rng: rng, now: t0, nodes: nodes(size, revOld)}
		canary := map[string]bool{}
		for i := range w.nodes {
			if rng.Intn(2) == 0 {
				w.nodes[i].Labels = map[string]string{"canary": "true"}
				canary[w.nodes[i].Name] = true
			}
		}
		s := spec(func(ru *v1beta1.DaemonSetRollingUpdate) {
			ru.MaxUnavailable = intOrStr(fmt.Sprint(rng.Intn(3)))
			if rng.Intn(3) == 0 {
				ru.MaxSurge = intOrStr(fmt.Sprint(1 + rng.Intn(2)))
			} else if ru.MaxUnavailable.IntValue() == 0 {
				ru.MaxUnavailable = intOrStr("1")
			}
			if rng.Intn(2) == 0 {
				ru.Type = v1beta1.DaemonSetInplaceRollingUpdateType
			}
			if rng.Intn(3) == 0 {
				ru.Partition = intOrStr(fmt.Sprint(rng.Intn(size + 1)))
			}
			if rng.Intn(4) == 0 {
				ru.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
			}
		})
		if rng.Intn(3) == 0 {
			s.MinReadySeconds = int32(rng.Intn(10))
		}
		ru := s.UpdateStrategy.RollingUpdate
		surge := scaled(ru.MaxSurge, size, 0)
		maxUnavailable := scaled(ru.MaxUnavailable, size, 1)
		minReady := time.Duration(s.MinReadySeconds) * time.Second
		partition := updateorder.Partition(ru.Partition, size)
		sel, _ := metav1.LabelSelectorAsSelector(ru.Selector)
		for i := 0; i < 400; i++ {
			if i == 150 && ru.Selector != nil {
				w.uncanary(canary) // kruise#1871: the node goes back to the old revision
			}
			before := w.unavailable(minReady)
			p := Compute(w.snapshot(s), w.now)
			for _, u := range p.Updates {
				n, j := w.find(u.Pod)
				// Outside the selector only a roll back: from the new revision, to the old one.
				back := (u.Mode == UpdateRecreate || u.Spec.Revision == revOld) && n.Pods[j].Revision == revNew
				if ru.Selector != nil && !sel.Matches(labels.Set(n.Labels)) && !back {
					t.Fatalf("seed %d step %d: updated %s on node %s outside the selector", seed, i, u.Pod, n.Name)
				}
			}
			w.apply(p)
			for _, node := range w.nodes {
				live := 0
				for _, pod := range node.Pods {
					if pod.live() {
						live++
					}
				}
				if live > 1 && (surge == 0 || live > 2) {
					t.Fatalf("seed %d step %d: node %s runs %d live daemon pods (maxSurge %d)", seed, i, node.Name, live, surge)
				}
			}
			if after := w.unavailable(minReady); surge == 0 && after > max(before, maxUnavailable) {
				t.Fatalf("seed %d step %d: %d nodes unavailable after the plan, %d before, maxUnavailable %d", seed, i, after, before, maxUnavailable)
			}
			if surge > 0 && len(p.Updates) > 0 {
				t.Fatalf("seed %d step %d: a surge update updated pods %+v", seed, i, p.Updates)
			}
			w.step()
		}
		updatedNodes, eligible := 0, 0
		for _, node := range w.nodes {
			if ru.Selector == nil || canary[node.Name] {
				eligible++
			}
			for _, pod := range node.Pods {
				if pod.live() && pod.Revision == revNew {
					updatedNodes++
					if ru.Selector != nil && !canary[node.Name] {
						t.Fatalf("seed %d: node %s outside the selector was updated", seed, node.Name)
					}
				}
			}
		}
		if want := min(eligible, size-partition); updatedNodes != want {
			t.Fatalf("seed %d: %d nodes updated at the end, want %d (size %d, partition %d, eligible %d)", seed, updatedNodes, want, size, partition, eligible)
		}
	}
}
