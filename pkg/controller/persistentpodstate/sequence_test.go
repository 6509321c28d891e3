package persistentpodstate

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
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
			sequences(t, policy, custom, zones)
		}
	}
}

func sequences(t *testing.T, policy v1alpha1.PersistentPodStateRetentionPolicyType, custom bool, zones map[string]map[string]string) {
	prefix := "db"
	if custom {
		prefix = "db-shard" // any prefix: the ordinal is the name's last number
	}
	newTarget := func(replicas int32) *Target {
		if custom {
			return customTarget("db", replicas)
		}
		return &Target{Name: "db", Replicas: ordinal.NewReplicas(0, replicas, ordinal.Reserved{})}
	}
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 7))
		p := pps(policy, nil)
		replicas := int32(3)
		pods := map[string]*corev1.Pod{}
		var log []string
		for step := range 40 {
			switch op := rng.IntN(4); {
			case op == 0: // scale
				replicas = int32(rng.IntN(5))
				for name := range pods {
					if ord := ordinal.OrdinalOf(prefix, name); ord >= int(replicas) {
						delete(pods, name)
					}
				}
				log = append(log, fmt.Sprintf("scale to %d", replicas))
			case op == 1 && len(pods) > 0: // delete a pod
				for name := range pods {
					delete(pods, name)
					log = append(log, "delete "+name)
					break
				}
			default: // the StatefulSet (re)creates a missing pod, which becomes ready or not
				ord := rng.IntN(int(replicas) + 1)
				name := ordinal.PodName(prefix, ord)
				if ord < int(replicas) && pods[name] == nil {
					node := fmt.Sprintf("n%d", rng.IntN(4))
					pods[name] = pod(name, node, rng.IntN(3) > 0, nil)
					log = append(log, fmt.Sprintf("create %s on %s", name, node))
				}
			}
			target := newTarget(replicas)
			before := p.Status.PodStates
			plan := PlanStates(Snapshot{State: p, Target: target, Pods: pods, NodeLabels: zones})
			p = p.DeepCopy()
			p.Status = plan.Status
			fail := func(format string, args ...any) {
				t.Fatalf("%s (custom %v) seed %d step %d: %s\nsteps: %v", policy, custom, seed, step, fmt.Sprintf(format, args...), log)
			}
			for name, pd := range pods {
				s, ok := p.Status.PodStates[name]
				if podReady(pd) && (!ok || s.NodeName != pd.Spec.NodeName || s.NodeTopologyLabels[zone] != zones[pd.Spec.NodeName][zone]) {
					fail("ready pod %s on %s has state %+v (%v)", name, pd.Spec.NodeName, s, ok)
				}
			}
			for name := range before {
				if _, kept := p.Status.PodStates[name]; !kept && target.Replicas.Contains(target.OrdinalOf(name)) {
					fail("the state of replica %s was dropped", name)
				}
			}
			if policy == v1alpha1.PersistentPodStateRetainWhenScaled {
				for name := range p.Status.PodStates {
					if _, alive := pods[name]; !alive && !target.Replicas.Contains(target.OrdinalOf(name)) {
						fail("the state of %s outlives its scale-in", name)
					}
				}
			}
		}
	}
}
