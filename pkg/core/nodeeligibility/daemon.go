package nodeeligibility

import (
	corev1 "k8s.io/api/core/v1"
)

// daemonTolerations are the tolerations Kubernetes' DaemonSet controller gives every daemon pod,
// so that a daemon keeps running through node conditions the node lifecycle turns into taints.
var daemonTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

// DaemonTolerations returns spec's tolerations with the daemon pod tolerations added or, where a
// toleration of the same key and effect exists, put in its place (the DaemonSet controller's
// order: the spec's own first). Host-network pods also tolerate node.kubernetes.io/network-unavailable.
// spec is not modified.
func DaemonTolerations(spec *corev1.PodSpec) []corev1.Toleration {
	add := daemonTolerations
	if spec.HostNetwork {
		add = append(append([]corev1.Toleration(nil), daemonTolerations...),
			corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	out := append([]corev1.Toleration(nil), spec.Tolerations...)
	for _, t := range add {
		out = addOrUpdate(out, t)
	}
	return out
}

// addOrUpdate is the DaemonSet controller's rule: an identical toleration is kept, one with the
// same key and effect is replaced, otherwise t is appended.
func addOrUpdate(list []corev1.Toleration, t corev1.Toleration) []corev1.Toleration {
	for i := range list {
		if list[i].MatchToleration(&t) {
			if list[i] == t {
				return list
			}
			list[i] = t
			return list
		}
	}
	return append(list, t)
}

// nodeNameField is the node field a daemon pod's affinity pins it by.
const nodeNameField = "metadata.name"

// PinToNode returns affinity with its required node affinity replaced by one term that selects
// exactly node by name (matchFields metadata.name), as the DaemonSet controller pins daemon pods:
// the scheduler then binds the pod there (or nowhere). Preferred terms and pod (anti-)affinity
// are kept. affinity is not modified.
func PinToNode(affinity *corev1.Affinity, node string) *corev1.Affinity {
	out := &corev1.Affinity{}
	if affinity != nil {
		out = affinity.DeepCopy()
	}
	if out.NodeAffinity == nil {
		out.NodeAffinity = &corev1.NodeAffinity{}
	}
	out.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: nodeNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node},
		}}}},
	}
	return out
}

// TargetNode is the node a daemon pod is for: its spec.nodeName once bound, else the node its
// affinity pins it to (PinToNode), else "".
func TargetNode(pod *corev1.Pod) string {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, req := range term.MatchFields {
			if req.Key == nodeNameField && req.Operator == corev1.NodeSelectorOpIn && len(req.Values) == 1 {
				return req.Values[0]
			}
		}
	}
	return ""
}
