package subset

import (
	corev1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// NodeMatchesTerm tells whether node satisfies a single node selector term (its expressions and
// fields ANDed). An empty term matches no node, as in Kubernetes. It errors on an invalid term.
func NodeMatchesTerm(node *corev1.Node, term *corev1.NodeSelectorTerm) (bool, error) {
	sel := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{*term}}
	return nodeaffinity.NewLazyErrorNodeSelector(sel).Match(node)
}

// NodeFitsUnitedDeploymentSubset tells whether node belongs to a UnitedDeployment subset: it
// matches the subset's nodeSelectorTerm.matchExpressions (the only part OpenKruise puts on the
// pods). A subset without expressions holds every node.
func NodeFitsUnitedDeploymentSubset(node *corev1.Node, s *appsv1alpha1.UnitedDeploymentSubset) (bool, error) {
	if len(s.NodeSelectorTerm.MatchExpressions) == 0 {
		return true, nil
	}
	return NodeMatchesTerm(node, &corev1.NodeSelectorTerm{MatchExpressions: s.NodeSelectorTerm.MatchExpressions})
}

// NodeFitsWorkloadSpreadSubset tells whether pod, once admitted into the WorkloadSpread subset s,
// could run on node as OpenKruise judges it: no taint of the node (of any effect) is left
// untolerated by the pod's and the subset's tolerations, and, when the subset has a required term,
// the pod's required node affinity ANDed with that term matches the node. pod may be nil (a pod
// with no constraints of its own).
func NodeFitsWorkloadSpreadSubset(node *corev1.Node, pod *corev1.Pod, s *appsv1alpha1.WorkloadSpreadSubset) (bool, error) {
	var spec corev1.PodSpec
	if pod != nil {
		spec = *pod.Spec.DeepCopy()
	}
	tolerations := append(spec.Tolerations, s.Tolerations...)
	if _, bad := v1helper.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, tolerations, nil, false); bad {
		return false, nil
	}
	if s.RequiredNodeSelectorTerm == nil {
		return true, nil
	}
	var terms []corev1.NodeSelectorTerm
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	terms = andTerm(terms, s.RequiredNodeSelectorTerm)
	return nodeaffinity.NewLazyErrorNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: terms}).Match(node)
}
