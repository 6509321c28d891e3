package persistentpodstate

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
)

// Target is what the planner needs of the targeted workload.
type Target struct {
	// Name is the workload's name, the prefix of its pods' names.
	Name string
	// Deleting is true once the workload has a deletionTimestamp.
	Deleting bool
	// Replicas are the ordinals its replicas have (ordinals.start, replicas, reserveOrdinals): kept
	// as intervals, so that no replicas or reserveOrdinals make the controller allocate more than
	// the workload's object takes.
	Replicas ordinal.Replicas
	// SuffixOrdinals is true for a custom workload: a pod's ordinal is the number after the last
	// dash of its name, whatever precedes it (a StatefulSet's pods are named <Name>-<ordinal>).
	SuffixOrdinals bool
}

// OrdinalOf is the ordinal of the target's pod name, or -1 when the name has none (such a
// state is never dropped on scale-in).
func (t *Target) OrdinalOf(pod string) int {
	if !t.SuffixOrdinals {
		return ordinal.OrdinalOf(t.Name, pod)
	}
	i := strings.LastIndex(pod, "-")
	if i < 0 {
		return -1
	}
	return ordinal.OrdinalOf(pod[:i], pod)
}

// Snapshot is one PersistentPodState with what its states are computed from, read at one moment.
type Snapshot struct {
	State *v1alpha1.PersistentPodState
	// Target is the workload, nil when it does not exist.
	Target *Target
	// Pods are the workload's alive pods by name.
	Pods map[string]*corev1.Pod
	// NodeLabels are the labels of the nodes the pods run on, by node name; a node the cache does
	// not know is absent.
	NodeLabels map[string]map[string]string
}

// ChangeKind says what happened to one pod's state.
type ChangeKind string

// Kinds of Change.
const (
	Recorded ChangeKind = "Recorded"
	Dropped  ChangeKind = "Dropped"
)

// Change is one pod's state recorded or dropped, with why.
type Change struct {
	Pod    string
	Kind   ChangeKind
	Reason string
}

// String reads as a note of the plan.
func (c Change) String() string {
	return fmt.Sprintf("%s %s: %s", strings.ToLower(string(c.Kind)), c.Pod, c.Reason)
}

// Plan is the status a PersistentPodState should have, and the changes that lead there.
type Plan struct {
	Status  v1alpha1.PersistentPodStateStatus
	Changes []Change
	// Waiting are the ready pods whose node the cache does not know yet: their state is not
	// recorded until it does.
	Waiting []string
}

// PlanStates computes the states of s.State (see the package's invariants). It reads s only.
func PlanStates(s Snapshot) Plan {
	spec := &s.State.Spec
	out := Plan{Status: v1alpha1.PersistentPodStateStatus{ObservedGeneration: s.State.Generation}}
	if s.Target == nil || s.Target.Deleting {
		why := "the workload does not exist"
		if s.Target != nil {
			why = "the workload is being deleted"
		}
		for _, name := range sortedKeys(s.State.Status.PodStates) {
			out.Changes = append(out.Changes, Change{Pod: name, Kind: Dropped, Reason: why})
		}
		return out
	}
	states := maps.Clone(s.State.Status.PodStates) // values are replaced, never modified
	if states == nil {
		states = map[string]v1alpha1.PersistentPodStatePodState{}
	}
	keys, annotations := TopologyKeys(spec), annotationKeys(spec)
	for _, name := range sortedKeys(s.Pods) {
		pod := s.Pods[name]
		if !podReady(pod) || pod.Spec.NodeName == "" {
			continue
		}
		old, had := states[name]
		if had && old.NodeName == pod.Spec.NodeName && sameKeys(old.NodeTopologyLabels, keys) && sameKeys(old.Annotations, annotations) {
			continue // recorded already
		}
		labels, known := s.NodeLabels[pod.Spec.NodeName]
		if !known {
			out.Waiting = append(out.Waiting, name)
			continue
		}
		state := record(pod, labels, keys, annotations)
		if had && sameState(old, state) {
			continue
		}
		states[name] = state
		out.Changes = append(out.Changes, Change{Pod: name, Kind: Recorded, Reason: recordReason(old, had, state)})
	}
	if spec.PersistentPodStateRetentionPolicy != v1alpha1.PersistentPodStateRetainWhenDeleted {
		for _, name := range sortedKeys(states) {
			ord := s.Target.OrdinalOf(name)
			if _, alive := s.Pods[name]; alive || ord < 0 || s.Target.Replicas.Contains(ord) {
				continue
			}
			delete(states, name)
			out.Changes = append(out.Changes, Change{Pod: name, Kind: Dropped,
				Reason: fmt.Sprintf("ordinal %d is no longer a replica and its pod is gone (retention WhenScaled)", ord)})
		}
	}
	if len(states) > 0 {
		out.Status.PodStates = states
	}
	return out
}

// TopologyKeys are the node label keys the required and preferred topologies name, sorted.
func TopologyKeys(spec *v1alpha1.PersistentPodStateSpec) []string {
	set := map[string]bool{}
	if spec.RequiredPersistentTopology != nil {
		for _, k := range spec.RequiredPersistentTopology.NodeTopologyKeys {
			set[k] = true
		}
	}
	for _, term := range spec.PreferredPersistentTopology {
		for _, k := range term.Preference.NodeTopologyKeys {
			set[k] = true
		}
	}
	return sortedKeys(set)
}

// annotationKeys are the pod annotation keys spec records, sorted.
func annotationKeys(spec *v1alpha1.PersistentPodStateSpec) []string {
	set := map[string]bool{}
	for _, a := range spec.PersistentPodAnnotations {
		set[a.Key] = true
	}
	return sortedKeys(set)
}

// record is the state of pod on a node labelled labels.
func record(pod *corev1.Pod, labels map[string]string, keys, annotations []string) v1alpha1.PersistentPodStatePodState {
	out := v1alpha1.PersistentPodStatePodState{NodeName: pod.Spec.NodeName}
	for _, k := range keys {
		if v, ok := labels[k]; ok {
			if out.NodeTopologyLabels == nil {
				out.NodeTopologyLabels = map[string]string{}
			}
			out.NodeTopologyLabels[k] = v
		}
	}
	for _, k := range annotations {
		if v, ok := pod.Annotations[k]; ok {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = v
		}
	}
	return out
}

func recordReason(old v1alpha1.PersistentPodStatePodState, had bool, state v1alpha1.PersistentPodStatePodState) string {
	topology := formatLabels(state.NodeTopologyLabels)
	switch {
	case !had:
		return fmt.Sprintf("ready on node %s (%s)", state.NodeName, topology)
	case old.NodeName != state.NodeName:
		return fmt.Sprintf("moved from node %s to node %s (%s)", old.NodeName, state.NodeName, topology)
	default:
		return fmt.Sprintf("the recorded keys changed: node %s (%s)", state.NodeName, topology)
	}
}

func formatLabels(m map[string]string) string {
	if len(m) == 0 {
		return "no topology label"
	}
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}

// podReady reports whether the pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// sameKeys reports whether m's keys are exactly keys (sorted, distinct).
func sameKeys(m map[string]string, keys []string) bool {
	if len(m) != len(keys) {
		return false
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

func sameState(a, b v1alpha1.PersistentPodStatePodState) bool {
	return a.NodeName == b.NodeName && maps.Equal(a.NodeTopologyLabels, b.NodeTopologyLabels) && maps.Equal(a.Annotations, b.Annotations)
}

// SameStatus reports whether two statuses say the same (absent and empty maps alike).
func SameStatus(a, b v1alpha1.PersistentPodStateStatus) bool {
	if a.ObservedGeneration != b.ObservedGeneration || len(a.PodStates) != len(b.PodStates) ||
		!equality.Semantic.DeepEqual(a.Conditions, b.Conditions) {
		return false
	}
	for name, x := range a.PodStates {
		if y, ok := b.PodStates[name]; !ok || !sameState(x, y) {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	out := slices.Collect(maps.Keys(m))
	sort.Strings(out)
	return out
}
