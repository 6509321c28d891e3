package persistentpodstate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
)

const zone = "topology.kubernetes.io/zone"

// pps targets the StatefulSet "db" and records the zone (required) and hostname (preferred).
func pps(policy v1alpha1.PersistentPodStateRetentionPolicyType, states map[string]v1alpha1.PersistentPodStatePodState) *v1alpha1.PersistentPodState {
	return &v1alpha1.PersistentPodState{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", Generation: 3},
		Spec: v1alpha1.PersistentPodStateSpec{
			TargetReference:            v1alpha1.PersistentPodStateTargetReference{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Name: "db"},
			RequiredPersistentTopology: &v1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{zone}},
			PreferredPersistentTopology: []v1alpha1.PersistentPodStatePreferredTopologyTerm{{Weight: 50,
				Preference: v1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{corev1.LabelHostname}}}},
			PersistentPodAnnotations:          []v1alpha1.PersistentPodStatePersistentPodAnnotation{{Key: "ip"}},
			PersistentPodStateRetentionPolicy: policy,
		},
		Status: v1alpha1.PersistentPodStateStatus{PodStates: states}}
}

func pod(name, node string, ready bool, annotations map[string]string) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}, Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}}}
}

func state(node, z string) v1alpha1.PersistentPodStatePodState {
	return v1alpha1.PersistentPodStatePodState{NodeName: node, NodeTopologyLabels: map[string]string{zone: z, corev1.LabelHostname: node}}
}

func withIP(s v1alpha1.PersistentPodStatePodState) v1alpha1.PersistentPodStatePodState {
	s.Annotations = map[string]string{"ip": "10.0.0.1"}
	return s
}

// ordinals are the replicas of exactly ords (ascending, distinct): from the first, the gaps
// reserved.
func ordinals(ords ...int) ordinal.Replicas {
	var gaps []ordinal.Interval
	for i := 1; i < len(ords); i++ {
		gaps = append(gaps, ordinal.Interval{First: ords[i-1] + 1, Last: ords[i] - 1})
	}
	return ordinal.NewReplicas(int32(ords[0]), int32(len(ords)), ordinal.NewReserved(gaps...))
}

func podMap(pods ...*corev1.Pod) map[string]*corev1.Pod {
	out := map[string]*corev1.Pod{}
	for _, p := range pods {
		out[p.Name] = p
	}
	return out
}

var nodes = map[string]map[string]string{
	"n1": {zone: "a", corev1.LabelHostname: "n1", "other": "x"},
	"n2": {zone: "b", corev1.LabelHostname: "n2"},
	"n3": {corev1.LabelHostname: "n3"}, // no zone
}

// describe renders states as "pod@node(zone)" sorted, for compact expectations.
func describe(states map[string]v1alpha1.PersistentPodStatePodState) string {
	var out []string
	for _, name := range sortedKeys(states) {
		s := states[name]
		out = append(out, fmt.Sprintf("%s@%s(%s)", name, s.NodeName, s.NodeTopologyLabels[zone]))
	}
	return strings.Join(out, " ")
}

func TestPlanStates(t *testing.T) {
	cases := []struct {
		name    string
		pps     *v1alpha1.PersistentPodState
		target  *Target
		pods    map[string]*corev1.Pod
		want    string
		changes []string // "kind pod"
		waiting []string
	}{{
		name:    "ready pods on known nodes are recorded; unready or unbound ones are not",
		pps:     pps("", nil),
		target:  &Target{Name: "db", Replicas: ordinals(0, 1, 2, 3)},
		pods:    podMap(pod("db-0", "n1", true, nil), pod("db-1", "n2", false, nil), pod("db-2", "", true, nil), pod("db-3", "n3", true, nil)),
		want:    "db-0@n1(a) db-3@n3()",
		changes: []string{"Recorded db-0", "Recorded db-3"},
	}, {
		name:   "a state recorded with the wanted keys on the same node is kept as it is",
		pps:    pps("", map[string]v1alpha1.PersistentPodStatePodState{"db-0": withIP(state("n1", "old"))}),
		target: &Target{Name: "db", Replicas: ordinals(0)},
		pods:   podMap(pod("db-0", "n1", true, map[string]string{"ip": "10.0.0.9"})),
		want:   "db-0@n1(old)",
	}, {
		name:    "a pod that moved to another node is recorded again",
		pps:     pps("", map[string]v1alpha1.PersistentPodStatePodState{"db-0": state("n1", "a")}),
		target:  &Target{Name: "db", Replicas: ordinals(0)},
		pods:    podMap(pod("db-0", "n2", true, nil)),
		want:    "db-0@n2(b)",
		changes: []string{"Recorded db-0"},
	}, {
		name:   "the state of a deleted pod whose ordinal is a replica is kept for its successor",
		pps:    pps("", map[string]v1alpha1.PersistentPodStatePodState{"db-0": state("n1", "a"), "db-1": state("n2", "b")}),
		target: &Target{Name: "db", Replicas: ordinals(0, 1)},
		pods:   podMap(pod("db-0", "n1", true, nil)),
		want:   "db-0@n1(a) db-1@n2(b)",
	}, {
		name:    "WhenScaled drops the states of ordinals scaled away once their pods are gone",
		pps:     pps(v1alpha1.PersistentPodStateRetainWhenScaled, map[string]v1alpha1.PersistentPodStatePodState{"db-0": state("n1", "a"), "db-1": state("n2", "b"), "db-2": state("n1", "a")}),
		target:  &Target{Name: "db", Replicas: ordinals(0)},
		pods:    podMap(pod("db-0", "n1", true, nil), pod("db-2", "n1", true, nil)),
		want:    "db-0@n1(a) db-2@n1(a)",
		changes: []string{"Dropped db-1"},
	}, {
		name:   "WhenDeleted keeps them through scale-in",
		pps:    pps(v1alpha1.PersistentPodStateRetainWhenDeleted, map[string]v1alpha1.PersistentPodStatePodState{"db-0": state("n1", "a"), "db-1": state("n2", "b")}),
		target: &Target{Name: "db", Replicas: ordinals(0)},
		pods:   podMap(pod("db-0", "n1", true, nil)),
		want:   "db-0@n1(a) db-1@n2(b)",
	}, {
		name:    "reserved ordinals and ordinals.start count: ordinal 4 is a replica of start 3 reserving 5, ordinal 1 is not",
		pps:     pps("", map[string]v1alpha1.PersistentPodStatePodState{"db-1": state("n1", "a"), "db-4": state("n2", "b"), "db-6": state("n2", "b")}),
		target:  &Target{Name: "db", Replicas: ordinals(3, 4, 6)},
		want:    "db-4@n2(b) db-6@n2(b)",
		changes: []string{"Dropped db-1"},
	}, {
		name:   "names not of the form <set>-<ordinal> are left alone",
		pps:    pps("", map[string]v1alpha1.PersistentPodStatePodState{"other-9": state("n1", "a")}),
		target: &Target{Name: "db", Replicas: ordinals(0)},
		want:   "other-9@n1(a)",
	}, {
		name:    "the workload is gone: every state is dropped, whatever the policy",
		pps:     pps(v1alpha1.PersistentPodStateRetainWhenDeleted, map[string]v1alpha1.PersistentPodStatePodState{"db-0": state("n1", "a")}),
		changes: []string{"Dropped db-0"},
	}, {
		name:    "the workload is being deleted: every state is dropped",
		pps:     pps("", map[string]v1alpha1.PersistentPodStatePodState{"db-0": state("n1", "a")}),
		target:  &Target{Name: "db", Deleting: true, Replicas: ordinals(0)},
		pods:    podMap(pod("db-0", "n1", true, nil)),
		changes: []string{"Dropped db-0"},
	}, {
		name: "custom workload: the ordinal is the name's last number, whatever precedes it; 0 to replicas-1 are replicas",
		pps: pps("", map[string]v1alpha1.PersistentPodStatePodState{"db-0": state("n1", "a"), "shard-x-1": state("n2", "b"),
			"shard-x-2": state("n1", "a"), "db-3": state("n2", "b"), "db-leader": state("n2", "b")}),
		target:  customTarget("db", 2),
		pods:    podMap(pod("db-3", "n2", true, nil)),
		want:    "db-0@n1(a) db-3@n2(b) db-leader@n2(b) shard-x-1@n2(b)",
		changes: []string{"Dropped shard-x-2"},
	}, {
		name:   "custom workload, WhenDeleted: states survive its scale-in",
		pps:    pps(v1alpha1.PersistentPodStateRetainWhenDeleted, map[string]v1alpha1.PersistentPodStatePodState{"db-0": state("n1", "a"), "db-1": state("n2", "b")}),
		target: customTarget("db", 1),
		want:   "db-0@n1(a) db-1@n2(b)",
	}, {
		name:    "custom workload scaled to 0: every state whose pod is gone is dropped",
		pps:     pps("", map[string]v1alpha1.PersistentPodStatePodState{"db-0": state("n1", "a"), "db-1": state("n2", "b")}),
		target:  customTarget("db", 0),
		pods:    podMap(pod("db-1", "n2", false, nil)),
		want:    "db-1@n2(b)",
		changes: []string{"Dropped db-0"},
	}, {
		name:    "a pod on a node the cache does not know waits",
		pps:     pps("", nil),
		target:  &Target{Name: "db", Replicas: ordinals(0)},
		pods:    podMap(pod("db-0", "n9", true, nil)),
		waiting: []string{"db-0"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.pps.DeepCopy()
			plan := PlanStates(Snapshot{State: tc.pps, Target: tc.target, Pods: tc.pods, NodeLabels: nodes})
			if got := describe(plan.Status.PodStates); got != tc.want {
				t.Errorf("states %q, want %q", got, tc.want)
			}
			var changes []string
			for _, c := range plan.Changes {
				changes = append(changes, string(c.Kind)+" "+c.Pod)
				if c.Reason == "" {
					t.Errorf("change %v without a reason", c)
				}
			}
			if !slices.Equal(changes, tc.changes) {
				t.Errorf("changes %v, want %v (%v)", changes, tc.changes, plan.Changes)
			}
			if !slices.Equal(plan.Waiting, tc.waiting) {
				t.Errorf("waiting %v, want %v", plan.Waiting, tc.waiting)
			}
			if plan.Status.ObservedGeneration != 3 {
				t.Errorf("observedGeneration %d, want 3", plan.Status.ObservedGeneration)
			}
			if !SameStatus(before.Status, tc.pps.Status) {
				t.Errorf("PlanStates modified its input")
			}
		})
	}
}

// A state holds the node, exactly the node labels the topologies name, and the named annotations.
func TestPlanStatesRecordsNamedKeysOnly(t *testing.T) {
	p := pod("db-0", "n1", true, map[string]string{"ip": "10.0.0.7", "unrelated": "x"})
	plan := PlanStates(Snapshot{State: pps("", nil), Target: &Target{Name: "db", Replicas: ordinals(0)}, Pods: podMap(p), NodeLabels: nodes})
	got := plan.Status.PodStates["db-0"]
	want := map[string]string{zone: "a", corev1.LabelHostname: "n1"}
	if got.NodeName != "n1" || !maps.Equal(got.NodeTopologyLabels, want) || !maps.Equal(got.Annotations, map[string]string{"ip": "10.0.0.7"}) {
		t.Errorf("state %+v, want node n1, labels %v, annotations ip only", got, want)
	}
	// Recorded again when a key is added to the spec, with the same node.
	next := pps("", plan.Status.PodStates)
	next.Spec.RequiredPersistentTopology.NodeTopologyKeys = append(next.Spec.RequiredPersistentTopology.NodeTopologyKeys, "other")
	again := PlanStates(Snapshot{State: next, Target: &Target{Name: "db", Replicas: ordinals(0)}, Pods: podMap(p), NodeLabels: nodes})
	if got := again.Status.PodStates["db-0"].NodeTopologyLabels["other"]; got != "x" || len(again.Changes) != 1 {
		t.Errorf("after a key was added: other=%q, changes %v", got, again.Changes)
	}
}

func TestSameStatus(t *testing.T) {
	empty := v1alpha1.PersistentPodStateStatus{ObservedGeneration: 1, PodStates: map[string]v1alpha1.PersistentPodStatePodState{}}
	if !SameStatus(empty, v1alpha1.PersistentPodStateStatus{ObservedGeneration: 1}) {
		t.Error("an empty map and none differ")
	}
	a := v1alpha1.PersistentPodStateStatus{PodStates: map[string]v1alpha1.PersistentPodStatePodState{"x": {NodeName: "n", Annotations: map[string]string{}}}}
	b := v1alpha1.PersistentPodStateStatus{PodStates: map[string]v1alpha1.PersistentPodStatePodState{"x": {NodeName: "n"}}}
	if !SameStatus(a, b) {
		t.Error("states with empty and absent annotations differ")
	}
	b.PodStates["x"] = v1alpha1.PersistentPodStatePodState{NodeName: "m"}
	if SameStatus(a, b) {
		t.Error("states on different nodes are the same")
	}
}

// A custom workload's pod ordinal is the number after the last dash (OpenKruise parses it so);
// a StatefulSet's is the number after <name>-.
func TestTargetOrdinalOf(t *testing.T) {
	set, custom := &Target{Name: "db"}, customTarget("db", 3)
	for _, tc := range []struct {
		pod         string
		set, custom int
	}{
		{"db-2", 2, 2},
		{"other-2", -1, 2},
		{"db-x-7", -1, 7},
		{"db-", -1, -1},
		{"db", -1, -1},
		{"db-01", -1, -1},
		{"db--1", -1, 1},
	} {
		if got := set.OrdinalOf(tc.pod); got != tc.set {
			t.Errorf("StatefulSet: OrdinalOf(%q) = %d, want %d", tc.pod, got, tc.set)
		}
		if got := custom.OrdinalOf(tc.pod); got != tc.custom {
			t.Errorf("custom: OrdinalOf(%q) = %d, want %d", tc.pod, got, tc.custom)
		}
	}
	if got := slices.Collect(custom.Replicas.All()); !slices.Equal(got, []int{0, 1, 2}) || custom.Deleting {
		t.Errorf("customTarget(db, 3) = %+v, want ordinals 0-2, not deleting", custom)
	}
}
