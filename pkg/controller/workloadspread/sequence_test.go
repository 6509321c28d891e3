package workloadspread

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
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
	for seed := uint64(1); seed <= 200; seed++ {
		if err := runSequence(seed); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

func runSequence(seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	spread := &appsv1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "spread"},
		Spec: appsv1alpha1.WorkloadSpreadSpec{
			TargetReference: &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web"},
			Subsets: []appsv1alpha1.WorkloadSpreadSubset{{Name: "a", MaxReplicas: ptr.To(intstr.FromInt32(3))},
				{Name: "b", MaxReplicas: ptr.To(intstr.FromInt32(2))}, {Name: "c"}}}}
	quota := map[string]int{"a": 3, "b": 2}
	var pods []*simPod
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	next := 0
	for step := 1; step <= 300; step++ {
		now := start.Add(time.Duration(step) * time.Second)
		lag := 1 + rng.IntN(4)
		switch r := rng.IntN(10); {
		case r < 4: // the workload creates a pod
			next++
			name := fmt.Sprintf("p%d", next)
			statuses := spread.Status.VersionedSubsetStatuses[spreadrules.VersionIgnored]
			if len(statuses) == 0 {
				statuses = spreadrules.InitialStatuses(spread.Spec.Subsets, 0)
			}
			d := spreadrules.Choose(spreadrules.SlotsFrom(spread.Spec.Subsets, statuses), spreadrules.Creation{Name: name})
			if d.Subset == "" {
				return fmt.Errorf("step %d: pod %s placed nowhere: %s", step, name, d.Reason)
			}
			if d.Change != nil {
				setVersioned(spread, d.Change.Apply(statuses, now))
			}
			p := pod(name, d.Subset)
			p.CreationTimestamp = metav1.NewTime(now)
			pods = append(pods, &simPod{pod: p, seenAt: step + lag})
		case r < 7: // a live pod is deleted
			live := livePods(pods)
			if len(live) == 0 {
				continue
			}
			sp := live[rng.IntN(len(live))]
			m := spreadrules.MatchedOf(sp.pod)
			statuses := spread.Status.VersionedSubsetStatuses[spreadrules.VersionIgnored]
			if len(statuses) == 0 {
				statuses = spreadrules.InitialStatuses(spread.Spec.Subsets, 0)
			}
			if d := spreadrules.Release(spreadrules.SlotsFrom(spread.Spec.Subsets, statuses), sp.pod.Name, m.Subset); d.Change != nil {
				setVersioned(spread, d.Change.Apply(statuses, now))
			}
			sp.deleted, sp.goneAt = true, step+lag
		default: // the controller reconciles from its cache
			var visible []*corev1.Pod
			for _, sp := range pods {
				if step >= sp.seenAt && (!sp.deleted || step < sp.goneAt) {
					visible = append(visible, sp.pod)
				}
			}
			p := computePlan(&snapshot{spread: spread, kind: "CloneSet", latest: spreadrules.VersionIgnored, pods: visible}, now)
			if !p.statusValid {
				return fmt.Errorf("step %d: status invalid: %+v", step, p.notes)
			}
			spread = spread.DeepCopy()
			spread.Status = p.status
		}
		count := map[string]int{}
		for _, sp := range livePods(pods) {
			count[spreadrules.MatchedOf(sp.pod).Subset]++
		}
		for name, q := range quota {
			if count[name] > q {
				return fmt.Errorf("step %d: subset %s holds %d live pods, quota %d (status %+v)", step, name, count[name], q,
					spread.Status.VersionedSubsetStatuses[spreadrules.VersionIgnored])
			}
		}
	}
	return nil
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
