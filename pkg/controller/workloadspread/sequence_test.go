package workloadspread

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
	"github.com/kruise-ng/kruise/pkg/platform/seqsim"
)

// simPod is a pod of the simulation: its real state, and when the controller's cache shows it.
type simPod struct {
	pod *corev1.Pod
	// seenAt is the step from which the cache shows the pod; goneAt the step from which the cache
	// no longer shows it (0: not deleted).
	seenAt, goneAt int
	deleted        bool
}

// TestSequencesKeepQuotas runs the webhook's decisions (spreadrules.Choose, spreadrules.Release) and the controller's
// plan against each other in seeded random orders, with a cache that shows pod creations and
// deletions a few steps late, and checks at every step that no limited subset holds more live pods
// than its maxReplicas and that every live pod was placed.
func TestSequencesKeepQuotas(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seqsim.Sequence{Seeds: seqsim.Seeds{First: 1, Count: 200}, Start: start, Tick: seqsim.Every(time.Second)}.Run(t, func(h *seqsim.History) {
		s := &spreadSim{h: h, spread: &appsv1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "spread"},
			Spec: appsv1alpha1.WorkloadSpreadSpec{
				TargetReference: &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web"},
				Subsets: []appsv1alpha1.WorkloadSpreadSubset{{Name: "a", MaxReplicas: ptr.To(intstr.FromInt32(3))},
					{Name: "b", MaxReplicas: ptr.To(intstr.FromInt32(2))}, {Name: "c"}}}}}
		h.Steps(300, s.step)
	})
}

// spreadSim is one seeded history of a spread's pods: the webhook places and releases them, the
// controller reconciles from a cache that lags.
type spreadSim struct {
	h      *seqsim.History
	spread *appsv1alpha1.WorkloadSpread
	pods   []*simPod
	next   int
}

// step creates a pod, deletes one or reconciles, then checks the quotas on the live pods.
func (s *spreadSim) step() bool {
	rng, step, now := s.h.Rand(), s.h.Step(), s.h.Now()
	lag := 1 + rng.IntN(4)
	switch r := rng.IntN(10); {
	case r < 4: // the workload creates a pod
		s.next++
		name := fmt.Sprintf("p%d", s.next)
		statuses := s.statuses()
		d := spreadrules.Choose(spreadrules.SlotsFrom(s.spread.Spec.Subsets, statuses), spreadrules.Creation{Name: name})
		if d.Subset == "" {
			s.h.Fatalf("pod %s placed nowhere: %s", name, d.Reason)
		}
		if d.Change != nil {
			setVersioned(s.spread, d.Change.Apply(statuses, now))
		}
		p := pod(name, d.Subset)
		p.CreationTimestamp = metav1.NewTime(now)
		s.pods = append(s.pods, &simPod{pod: p, seenAt: step + lag})
		s.h.Logf("create %s in %s, seen from step %d", name, d.Subset, step+lag)
	case r < 7: // a live pod is deleted
		live := livePods(s.pods)
		if len(live) == 0 {
			return false
		}
		sp := live[rng.IntN(len(live))]
		m := spreadrules.MatchedOf(sp.pod)
		statuses := s.statuses()
		if d := spreadrules.Release(spreadrules.SlotsFrom(s.spread.Spec.Subsets, statuses), sp.pod.Name, m.Subset); d.Change != nil {
			setVersioned(s.spread, d.Change.Apply(statuses, now))
		}
		sp.deleted, sp.goneAt = true, step+lag
		s.h.Logf("delete %s from %s, gone from step %d", sp.pod.Name, m.Subset, step+lag)
	default:
		s.reconcile()
	}
	s.check()
	return false
}

// statuses are the spread's subset statuses, or the initial ones.
func (s *spreadSim) statuses() []appsv1alpha1.WorkloadSpreadSubsetStatus {
	statuses := s.spread.Status.VersionedSubsetStatuses[spreadrules.VersionIgnored]
	if len(statuses) == 0 {
		statuses = spreadrules.InitialStatuses(s.spread.Spec.Subsets, 0)
	}
	return statuses
}

// reconcile plans from the pods the controller's cache shows and writes the status.
func (s *spreadSim) reconcile() {
	step := s.h.Step()
	var visible []*corev1.Pod
	for _, sp := range s.pods {
		if step >= sp.seenAt && (!sp.deleted || step < sp.goneAt) {
			visible = append(visible, sp.pod)
		}
	}
	p := computePlan(&snapshot{spread: s.spread, kind: "CloneSet", latest: spreadrules.VersionIgnored, pods: visible}, s.h.Now())
	if !p.statusValid {
		s.h.Fatalf("status invalid: %+v", p.notes)
	}
	s.spread = s.spread.DeepCopy()
	s.spread.Status = p.status
	s.h.Logf("reconcile from %d pods", len(visible))
}

// check asserts that no limited subset holds more live pods than its quota.
func (s *spreadSim) check() {
	quota := map[string]int{"a": 3, "b": 2} // the maxReplicas of the limited subsets
	count := map[string]int{}
	for _, sp := range livePods(s.pods) {
		count[spreadrules.MatchedOf(sp.pod).Subset]++
	}
	for name, q := range quota {
		if count[name] > q {
			s.h.Fatalf("subset %s holds %d live pods, quota %d (status %+v)", name, count[name], q,
				s.spread.Status.VersionedSubsetStatuses[spreadrules.VersionIgnored])
		}
	}
}

func livePods(pods []*simPod) []*simPod {
	var out []*simPod
	for _, sp := range pods {
		if !sp.deleted {
			out = append(out, sp)
		}
	}
	return out
}

func setVersioned(spread *appsv1alpha1.WorkloadSpread, statuses []appsv1alpha1.WorkloadSpreadSubsetStatus) {
	if spread.Status.VersionedSubsetStatuses == nil {
		spread.Status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{}
	}
	spread.Status.VersionedSubsetStatuses[spreadrules.VersionIgnored] = statuses
}
