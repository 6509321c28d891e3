package persistentpodstate

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/platform/seqsim"
)

// TestPlanStatesSequences drives the planner through seeded random sequences of what a
// StatefulSet's pods go through (become ready on a node, are deleted and recreated elsewhere, the
// set scales in and out) and checks after every step, for both retention policies, for a
// StatefulSet and for a custom workload (whose pods are named <anything>-<ordinal>):
//   - every ready pod bound to a node has its state, on that node, with that node's zone;
//   - the state of a replica ordinal is never dropped while the workload exists;
//   - with WhenScaled, no state outlives a pod whose ordinal is no longer a replica.
func TestPlanStatesSequences(t *testing.T) {
	zones := map[string]map[string]string{}
	for i := range 4 {
		zones[fmt.Sprintf("n%d", i)] = map[string]string{zone: fmt.Sprintf("z%d", i)}
	}
	for _, policy := range []v1alpha1.PersistentPodStateRetentionPolicyType{v1alpha1.PersistentPodStateRetainWhenScaled, v1alpha1.PersistentPodStateRetainWhenDeleted} {
		for _, custom := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s-custom=%v", policy, custom), func(t *testing.T) {
				seqsim.Sequence{Seeds: seqsim.Seeds{First: 0, Count: 50}}.Run(t, func(h *seqsim.History) {
					newStatesSim(h, policy, custom, zones).run()
				})
			})
		}
	}
}

// statesSim is one seeded history of a workload's pods and the PersistentPodState planned for them.
type statesSim struct {
	h      *seqsim.History
	policy v1alpha1.PersistentPodStateRetentionPolicyType
	custom bool
	zones  map[string]map[string]string
	prefix string // of the pods' names
}

func newStatesSim(h *seqsim.History, policy v1alpha1.PersistentPodStateRetentionPolicyType, custom bool, zones map[string]map[string]string) *statesSim {
	prefix := "db"
	if custom {
		prefix = "db-shard" // any prefix: the ordinal is the name's last number
	}
	return &statesSim{h: h, policy: policy, custom: custom, zones: zones, prefix: prefix}
}

func (s *statesSim) target(replicas int32) *Target {
	if s.custom {
		return customTarget("db", replicas)
	}
	return &Target{Name: "db", Replicas: ordinal.NewReplicas(0, replicas, ordinal.Reserved{})}
}

// run moves the pods at random at every step, plans the states and checks them.
func (s *statesSim) run() {
	rng, h := s.h.Rand(), s.h
	p := pps(s.policy, nil)
	replicas := int32(3)
	pods := map[string]*corev1.Pod{}
	h.Steps(40, func() bool {
		switch op := rng.IntN(4); {
		case op == 0: // scale
			replicas = int32(rng.IntN(5))
			for name := range pods {
				if ord := ordinal.OrdinalOf(s.prefix, name); ord >= int(replicas) {
					delete(pods, name)
				}
			}
			h.Logf("scale to %d", replicas)
		case op == 1 && len(pods) > 0: // delete a pod
			names := slices.Sorted(maps.Keys(pods))
			name := names[rng.IntN(len(names))]
			delete(pods, name)
			h.Logf("delete %s", name)
		default: // the StatefulSet (re)creates a missing pod, which becomes ready or not
			ord := rng.IntN(int(replicas) + 1)
			name := ordinal.PodName(s.prefix, ord)
			if ord < int(replicas) && pods[name] == nil {
				node := fmt.Sprintf("n%d", rng.IntN(4))
				pods[name] = pod(name, node, rng.IntN(3) > 0, nil)
				h.Logf("create %s on %s", name, node)
			}
		}
		target := s.target(replicas)
		before := p.Status.PodStates
		plan := PlanStates(Snapshot{State: p, Target: target, Pods: pods, NodeLabels: s.zones})
		p = p.DeepCopy()
		p.Status = plan.Status
		s.check(target, pods, before, p.Status.PodStates)
		return false
	})
}

// check asserts the invariants of the states planned (after) from before for pods and target.
func (s *statesSim) check(target *Target, pods map[string]*corev1.Pod, before, after map[string]v1alpha1.PersistentPodStatePodState) {
	for name, pd := range pods {
		st, ok := after[name]
		if podReady(pd) && (!ok || st.NodeName != pd.Spec.NodeName || st.NodeTopologyLabels[zone] != s.zones[pd.Spec.NodeName][zone]) {
			s.h.Fatalf("ready pod %s on %s has state %+v (%v)", name, pd.Spec.NodeName, st, ok)
		}
	}
	for name := range before {
		if _, kept := after[name]; !kept && target.Replicas.Contains(target.OrdinalOf(name)) {
			s.h.Fatalf("the state of replica %s was dropped", name)
		}
	}
	if s.policy == v1alpha1.PersistentPodStateRetainWhenScaled {
		for name := range after {
			if _, alive := pods[name]; !alive && !target.Replicas.Contains(target.OrdinalOf(name)) {
				s.h.Fatalf("the state of %s outlives its scale-in", name)
			}
		}
	}
}
