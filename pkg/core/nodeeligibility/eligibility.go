package nodeeligibility

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// Verdict is what a node means for a workload's pod.
type Verdict struct {
	// Run: a new pod is placed on the node.
	Run bool
	// Continue: a pod already on the node may keep running (false: it is to be removed).
	Continue bool
	// Reason says why the pod does not run ("" when Run).
	Reason string
}

// Rules select the optional checks.
type Rules struct {
	// Resources checks the pod's requests against the node's allocatable (BroadcastJob).
	Resources bool
}

// Evaluate returns the verdict for a pod of spec on node. spec is the spec the workload would
// create, tolerations included (see DaemonTolerations); it is not modified.
func Evaluate(node *corev1.Node, spec *corev1.PodSpec, rules Rules) Verdict {
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return Verdict{Reason: fmt.Sprintf("the pod template names node %s", spec.NodeName)}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "eligibility"}, Spec: *spec}
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); err != nil || !ok {
		return Verdict{Reason: "the node does not match the pod's node selector or required node affinity"}
	}
	taints := Taints(node)
	if taint, bad := v1helper.FindMatchingUntoleratedTaint(klog.Background(), taints, spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoExecute
	}, false); bad {
		return Verdict{Reason: fmt.Sprintf("the pod does not tolerate the node's taint %s", describe(taint))}
	}
	if taint, bad := v1helper.FindMatchingUntoleratedTaint(klog.Background(), taints, spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule
	}, false); bad {
		return Verdict{Continue: true, Reason: fmt.Sprintf("the pod does not tolerate the node's taint %s", describe(taint))}
	}
	if rules.Resources {
		if short := insufficient(node, pod); short != "" {
			return Verdict{Reason: fmt.Sprintf("the node's allocatable %s is less than the pod requests", short)}
		}
	}
	return Verdict{Run: true, Continue: true}
}

// Taints are the node's taints as the scheduler sees them: spec.taints plus
// node.kubernetes.io/unschedulable:NoSchedule for a cordoned node that does not carry it yet.
func Taints(node *corev1.Node) []corev1.Taint {
	if !node.Spec.Unschedulable {
		return node.Spec.Taints
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeUnschedulable && t.Effect == corev1.TaintEffectNoSchedule {
			return node.Spec.Taints
		}
	}
	out := make([]corev1.Taint, 0, len(node.Spec.Taints)+1)
	out = append(out, node.Spec.Taints...)
	return append(out, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
}

// insufficient names the first resource the pod requests beyond the node's allocatable ("" when
// it fits). A node that reports no allocatable at all is taken to fit, as a node being registered.
func insufficient(node *corev1.Node, pod *corev1.Pod) string {
	alloc := node.Status.Allocatable
	if len(alloc) == 0 {
		return ""
	}
	if pods, ok := alloc[corev1.ResourcePods]; ok && pods.Value() < 1 {
		return string(corev1.ResourcePods)
	}
	for name, want := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		if want.IsZero() {
			continue
		}
		have, ok := alloc[name]
		if !ok || have.Cmp(want) < 0 {
			return string(name)
		}
	}
	return ""
}

func describe(t corev1.Taint) string {
	if t.Value == "" {
		return fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}

// Relevant reports whether a node change can change a verdict: labels, fields matched by node
// affinity (the name), taints, unschedulable, allocatable.
func Relevant(old, cur *corev1.Node) bool {
	return !equality.Semantic.DeepEqual(old.Labels, cur.Labels) ||
		!equality.Semantic.DeepEqual(old.Spec.Taints, cur.Spec.Taints) ||
		old.Spec.Unschedulable != cur.Spec.Unschedulable ||
		!equality.Semantic.DeepEqual(old.Status.Allocatable, cur.Status.Allocatable)
}
