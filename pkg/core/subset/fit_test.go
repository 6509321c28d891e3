package subset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func node(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
}

func TestNodeFitsUnitedDeploymentSubset(t *testing.T) {
	s := &appsv1alpha1.UnitedDeploymentSubset{NodeSelectorTerm: corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{req("zone", "a")},
	}}
	for _, tc := range []struct {
		node *corev1.Node
		s    *appsv1alpha1.UnitedDeploymentSubset
		want bool
	}{
		{node("n1", map[string]string{"zone": "a"}), s, true},
		{node("n2", map[string]string{"zone": "b"}), s, false},
		{node("n3", nil), &appsv1alpha1.UnitedDeploymentSubset{}, true},
	} {
		got, err := NodeFitsUnitedDeploymentSubset(tc.node, tc.s)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %v, %v; want %v", tc.node.Name, got, err, tc.want)
		}
	}
}

func TestNodeFitsWorkloadSpreadSubset(t *testing.T) {
	spot := corev1.Taint{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}
	subset := &appsv1alpha1.WorkloadSpreadSubset{RequiredNodeSelectorTerm: &corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{req("zone", "a")},
	}}
	tolerating := &appsv1alpha1.WorkloadSpreadSubset{
		RequiredNodeSelectorTerm: subset.RequiredNodeSelectorTerm,
		Tolerations:              []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}},
	}
	ssdPod := &corev1.Pod{Spec: corev1.PodSpec{Affinity: required(corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{req("disk", "ssd")},
	})}}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		pod  *corev1.Pod
		s    *appsv1alpha1.WorkloadSpreadSubset
		want bool
	}{
		{"matching node", node("n", map[string]string{"zone": "a"}), nil, subset, true},
		{"other zone", node("n", map[string]string{"zone": "b"}), nil, subset, false},
		{"any untolerated taint, even PreferNoSchedule, excludes", node("n", map[string]string{"zone": "a"}, spot), nil, subset, false},
		{"subset toleration admits", node("n", map[string]string{"zone": "a"}, spot), nil, tolerating, true},
		{"pod affinity ANDed: lacks ssd", node("n", map[string]string{"zone": "a"}), ssdPod, subset, false},
		{"pod affinity ANDed: has ssd", node("n", map[string]string{"zone": "a", "disk": "ssd"}), ssdPod, subset, true},
		{"no required term: only taints matter", node("n", nil), nil, &appsv1alpha1.WorkloadSpreadSubset{}, true},
	} {
		got, err := NodeFitsWorkloadSpreadSubset(tc.node, tc.pod, tc.s)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
