package statefulset

import (
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/platform/seqsim"
)

// world is a simulated cluster for one set in a seeded history (h): pods by ordinal, moved by the
// plan and by a random kubelet.
type world struct {
	h    *seqsim.History
	pods map[int]*PodFacts
}

func (w *world) snapshot(s v1beta1.StatefulSetSpec, res ordinal.Reserved) *Snapshot {
	sn := snap(s)
	sn.Reserved = res
	for _, p := range w.pods {
		sn.Pods = append(sn.Pods, *p)
	}
	slices.SortFunc(sn.Pods, func(a, b PodFacts) int { return a.Ordinal - b.Ordinal })
	return sn
}

// apply carries the plan out as the API server would.
func (w *world) apply(p Plan) {
	for _, c := range p.Creates {
		w.pods[c.Ordinal] = &PodFacts{Name: ordinal.PodName("web", c.Ordinal), Ordinal: c.Ordinal, Revision: c.Revision}
		w.pods[c.Ordinal].Phase = corev1.PodPending
	}
	terminate := func(name string) {
		for _, pod := range w.pods {
			if pod.Name == name {
				pod.Terminating = true
			}
		}
	}
	for _, d := range p.Deletes {
		terminate(d.Pod)
	}
	for _, u := range p.Updates {
		if u.Mode == UpdateRecreate {
			terminate(u.Pod)
			continue
		}
		for _, pod := range w.pods {
			if pod.Name == u.Pod {
				pod.Revision, pod.InPlaceUpdating, pod.Ready = u.Spec.Revision, true, false
			}
		}
	}
}

// step moves one random pod on, as the kubelet and the garbage collector would.
func (w *world) step() {
	ords := make([]int, 0, len(w.pods))
	for o := range w.pods {
		ords = append(ords, o)
	}
	if len(ords) == 0 {
		return
	}
	slices.Sort(ords)
	pod := w.pods[ords[w.h.Rand().IntN(len(ords))]]
	switch {
	case pod.Terminating:
		delete(w.pods, pod.Ordinal)
	case pod.InPlaceUpdating:
		pod.InPlaceUpdating, pod.Ready, pod.ReadySince = false, true, w.h.Now()
	case pod.Phase == corev1.PodPending:
		pod.Phase = corev1.PodRunning
	case pod.running() && !pod.Ready:
		pod.Ready, pod.ReadySince = true, w.h.Now()
	case w.h.Rand().IntN(20) == 0:
		pod.Phase, pod.Ready = corev1.PodFailed, false // a crash
	}
}

// checkPlan asserts the package's invariants for a plan made from sn.
func checkPlan(h *seqsim.History, sn *Snapshot, p Plan) {
	now := h.Now()
	pl := newPlanner(sn, now)
	for _, c := range p.Creates {
		if ok := pl.replicas.Contains(c.Ordinal); !ok || pl.byOrd[c.Ordinal] != nil {
			h.Fatalf("created ordinal %d: a replica %v, its pod %v", c.Ordinal, ok, pl.byOrd[c.Ordinal])
		}
	}
	unhealthy := 0
	for o := range pl.replicas.All() {
		if pod := pl.byOrd[o]; pod == nil || !pod.healthy(now, pl.minReady) {
			unhealthy++
		}
	}
	if pl.monotonic {
		if len(p.Creates)+len(p.Deletes) > 1 {
			h.Fatalf("OrderedReady acted on %d pods at once: %+v %+v", len(p.Creates)+len(p.Deletes), p.Creates, p.Deletes)
		}
		for _, c := range p.Creates {
			for o := range pl.replicas.All() {
				if pod := pl.byOrd[o]; o < c.Ordinal && (pod == nil || !pod.healthy(now, pl.minReady)) {
					h.Fatalf("OrderedReady created ordinal %d while %d is not healthy", c.Ordinal, o)
				}
			}
		}
	}
	ru := sn.Spec.UpdateStrategy.RollingUpdate
	maxU := scaledValue(ru.MaxUnavailable, pl.replicas.Len())
	costly := 0
	for _, u := range p.Updates {
		ord := ordinal.OrdinalOf("web", u.Pod)
		if pos, _ := pl.replicas.Position(ord); pos < int(ptr.Deref(ru.Partition, 0)) {
			h.Fatalf("updated %s below partition %d", u.Pod, *ru.Partition)
		}
		if pl.byOrd[ord].healthy(now, pl.minReady) {
			costly++
		}
		if ru.PodUpdatePolicy != v1beta1.RecreateStatefulSetPodUpdatePolicy && u.Mode == UpdateRecreate {
			h.Fatalf("recreated %s though it can be updated in place", u.Pod)
		}
	}
	if costly > 0 && unhealthy+costly > maxU {
		h.Fatalf("%d healthy pods made unavailable with %d unavailable, maxUnavailable %d", costly, unhealthy, maxU)
	}
}

// TestPlanSequences runs seeded random rollouts and scalings and checks every plan's invariants
// and that each converges.
func TestPlanSequences(t *testing.T) {
	seqsim.Sequence{Seeds: seqsim.Seeds{First: 0, Count: 300}, Start: t0, Tick: seqsim.Every(time.Second)}.Run(t, runSequence)
}

// runSequence plans, checks and applies at every step, then lets the kubelet move a pod on.
func runSequence(h *seqsim.History) {
	rng := h.Rand()
	policy := appsv1.OrderedReadyPodManagement
	if rng.IntN(2) == 0 {
		policy = appsv1.ParallelPodManagement
	}
	replicas := int32(1 + rng.IntN(6))
	part := int32(rng.IntN(3))
	upd := []v1beta1.StatefulSetPodUpdatePolicyType{v1beta1.RecreateStatefulSetPodUpdatePolicy,
		v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy}[rng.IntN(2)]
	s := spec(replicas, policy, partition(part), maxUnavailable(intstr.FromInt32(int32(1+rng.IntN(3)))), podPolicy(upd))
	var res ordinal.Reserved
	if rng.IntN(2) == 0 {
		res = reserved(rng.IntN(4))
	}
	w := &world{h: h, pods: map[int]*PodFacts{}}
	for o := range ordinal.NewReplicas(0, replicas+int32(rng.IntN(3)), ordinal.Reserved{}).All() { // some start beyond the replicas
		p := healthyPod(o, "web-old")
		w.pods[o] = &p
	}
	h.Logf("replicas %d, partition %d, %s, %s, reserved %v", replicas, part, policy, upd, res)
	done := h.Steps(2000, func() bool {
		sn := w.snapshot(s, res)
		p := Compute(sn, h.Now())
		checkPlan(h, sn, p)
		w.apply(p)
		if len(p.Creates)+len(p.Deletes)+len(p.Updates) > 0 {
			h.Logf("plan: creates %v, deletes %v, updates %v", p.Creates, p.Deletes, p.Updates)
		}
		if h.Step() == 300 && rng.IntN(2) == 0 {
			s.Replicas = ptr.To(int32(1 + rng.IntN(6))) // a scale in the middle of the rollout
			h.Logf("scale to %d", *s.Replicas)
		}
		if converged(w, s, res) {
			return true
		}
		w.step()
		return false
	})
	if !done {
		h.Fatalf("no convergence: replicas %d, partition %d, %s, pods %v", *s.Replicas, part, policy, describe(w))
	}
}

func converged(w *world, s v1beta1.StatefulSetSpec, res ordinal.Reserved) bool {
	ords := slices.Collect(ordinal.NewReplicas(0, *s.Replicas, res).All())
	if len(w.pods) != len(ords) {
		return false
	}
	part := int(ptr.Deref(s.UpdateStrategy.RollingUpdate.Partition, 0))
	for i, o := range ords {
		pod := w.pods[o]
		if pod == nil || !pod.healthy(w.h.Now(), 0) || (i >= part && pod.Revision != "web-new") {
			return false
		}
	}
	return true
}

func describe(w *world) string {
	var out []string
	for o, p := range w.pods {
		out = append(out, fmt.Sprintf("%d:%s/%s/ready=%v/term=%v/upd=%v", o, p.Revision, p.Phase, p.Ready, p.Terminating, p.InPlaceUpdating))
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}
