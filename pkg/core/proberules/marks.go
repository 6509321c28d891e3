package proberules

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Marks are what a pod's probe states make it carry: conditions, and labels and annotations to
// set (a value) or remove (nil).
type Marks struct {
	Conditions  []corev1.PodCondition
	Labels      map[string]*string
	Annotations map[string]*string
	// States are the states the marks reflect, by probe (NodePodProbe name).
	States map[string]v1alpha1.PodProbeMarkerState
}

// PodMarks are the marks of states (a pod's entry of its node's NodePodProbe status), with markers
// the pod's namespace's PodProbeMarkers by name. As OpenKruise: a probe whose podConditionType is
// set makes a condition of that type, True when Succeeded, else False, with the state's times and
// message (the first probe of a type wins); the markerPolicy of the state sets its labels and
// annotations, and the other state's policy removes its own. States of markers gone or being
// deleted, and empty states, mark nothing.
func PodMarks(states []v1alpha1.NodePodProbeContainerProbeState, markers map[string]*v1alpha1.PodProbeMarker) Marks {
	out := Marks{Labels: map[string]*string{}, Annotations: map[string]*string{}, States: map[string]v1alpha1.PodProbeMarkerState{}}
	types := map[string]bool{}
	for _, st := range states {
		if st.State == "" {
			continue
		}
		mname, pname, ok := SplitProbeName(st.Name)
		m := markers[mname]
		if !ok || m == nil || m.DeletionTimestamp != nil {
			continue
		}
		i := slices.IndexFunc(m.Spec.Probes, func(p v1alpha1.PodProbeMarkerProbe) bool { return p.Name == pname })
		if i < 0 {
			continue
		}
		probe := m.Spec.Probes[i]
		out.States[st.Name] = st.State
		if t := probe.PodConditionType; t != "" && !types[t] {
			types[t] = true
			status := corev1.ConditionFalse
			if st.State == v1alpha1.PodProbeMarkerStateSucceeded {
				status = corev1.ConditionTrue
			}
			out.Conditions = append(out.Conditions, corev1.PodCondition{Type: corev1.PodConditionType(t), Status: status,
				LastProbeTime: st.LastProbeTime, LastTransitionTime: st.LastTransitionTime, Message: st.Message})
		}
		for _, policy := range probe.MarkerPolicy {
			if policy.State != st.State {
				put(out.Labels, policy.Labels, false)
				put(out.Annotations, policy.Annotations, false)
			}
		}
		for _, policy := range probe.MarkerPolicy {
			if policy.State == st.State {
				put(out.Labels, policy.Labels, true)
				put(out.Annotations, policy.Annotations, true)
			}
		}
	}
	return out
}

func put(into map[string]*string, from map[string]string, set bool) {
	for _, k := range slices.Sorted(maps.Keys(from)) {
		if set {
			v := from[k]
			into[k] = &v
		} else {
			into[k] = nil
		}
	}
}

// MetadataChanges are the labels and annotations of marks that pod does not carry yet (nil:
// remove), for a merge patch; empty maps when there are none.
func MetadataChanges(pod *corev1.Pod, marks Marks) (labels, annotations map[string]any) {
	return diff(pod.Labels, marks.Labels), diff(pod.Annotations, marks.Annotations)
}

func diff(have map[string]string, want map[string]*string) map[string]any {
	out := map[string]any{}
	for k, v := range want {
		cur, ok := have[k]
		switch {
		case v == nil && ok:
			out[k] = nil
		case v != nil && (!ok || cur != *v):
			out[k] = *v
		}
	}
	return out
}

// ConditionChanges are the conditions of marks whose status or message differ from pod's (as
// OpenKruise, a new probe time alone is not a change).
func ConditionChanges(pod *corev1.Pod, marks Marks) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, want := range marks.Conditions {
		i := slices.IndexFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == want.Type })
		if i >= 0 && pod.Status.Conditions[i].Status == want.Status && pod.Status.Conditions[i].Message == want.Message {
			continue
		}
		out = append(out, want)
	}
	return out
}
