package nodeeligibility

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("110")}}}
}

func TestEvaluate(t *testing.T) {
	noSchedule := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	noExecute := corev1.Taint{Key: "evict", Effect: corev1.TaintEffectNoExecute}
	tolerateAll := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	cordoned := node("n1", nil)
	cordoned.Spec.Unschedulable = true
	big := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}}}
	gpu := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}}}}}
	affinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
			Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}}}}}}
	cases := []struct {
		name           string
		node           *corev1.Node
		spec           corev1.PodSpec
		rules          Rules
		run, cont      bool
		reasonContains string
	}{
		{name: "plain node", node: node("n1", nil), run: true, cont: true},
		{name: "nodeName elsewhere", node: node("n1", nil), spec: corev1.PodSpec{NodeName: "n2"}, reasonContains: "names node n2"},
		{name: "nodeName here", node: node("n1", nil), spec: corev1.PodSpec{NodeName: "n1"}, run: true, cont: true},
		{name: "nodeSelector matches", node: node("n1", map[string]string{"role": "edge"}), spec: corev1.PodSpec{NodeSelector: map[string]string{"role": "edge"}}, run: true, cont: true},
		{name: "nodeSelector misses", node: node("n1", map[string]string{"role": "core"}), spec: corev1.PodSpec{NodeSelector: map[string]string{"role": "edge"}}, reasonContains: "node selector"},
		{name: "affinity matches", node: node("n1", map[string]string{"zone": "b"}), spec: corev1.PodSpec{Affinity: affinity}, run: true, cont: true},
		{name: "affinity misses", node: node("n1", map[string]string{"zone": "c"}), spec: corev1.PodSpec{Affinity: affinity}, reasonContains: "affinity"},
		{name: "pinned elsewhere", node: node("n1", nil), spec: corev1.PodSpec{Affinity: PinToNode(nil, "n2")}, reasonContains: "affinity"},
		{name: "pinned here", node: node("n1", nil), spec: corev1.PodSpec{Affinity: PinToNode(nil, "n1")}, run: true, cont: true},
		{name: "NoSchedule untolerated: keeps running", node: node("n1", nil, noSchedule), cont: true, reasonContains: "dedicated=gpu:NoSchedule"},
		{name: "NoSchedule tolerated", node: node("n1", nil, noSchedule), spec: corev1.PodSpec{Tolerations: tolerateAll}, run: true, cont: true},
		{name: "NoExecute untolerated: removed", node: node("n1", nil, noExecute), reasonContains: "evict:NoExecute"},
		{name: "PreferNoSchedule ignored", node: node("n1", nil, corev1.Taint{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}), run: true, cont: true},
		{name: "cordoned", node: cordoned, cont: true, reasonContains: "unschedulable"},
		{name: "cordoned, daemon tolerations", node: cordoned, spec: corev1.PodSpec{Tolerations: DaemonTolerations(&corev1.PodSpec{})}, run: true, cont: true},
		{name: "resources not checked", node: node("n1", nil), spec: big, run: true, cont: true},
		{name: "resources checked: cpu short", node: node("n1", nil), spec: big, rules: Rules{Resources: true}, reasonContains: "cpu"},
		{name: "resources checked: extended resource missing", node: node("n1", nil), spec: gpu, rules: Rules{Resources: true}, reasonContains: "example.com/gpu"},
		{name: "resources checked: fits", node: node("n1", nil), spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}, rules: Rules{Resources: true}, run: true, cont: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Evaluate(tc.node, &tc.spec, tc.rules)
			if v.Run != tc.run || v.Continue != tc.cont || !strings.Contains(v.Reason, tc.reasonContains) || (v.Run && v.Reason != "") {
				t.Fatalf("Evaluate = %+v, want run=%v continue=%v reason containing %q", v, tc.run, tc.cont, tc.reasonContains)
			}
		})
	}
}

func TestDaemonTolerations(t *testing.T) {
	own := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64)}
	spec := &corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "mine", Operator: corev1.TolerationOpExists}, own}}
	got := DaemonTolerations(spec)
	if len(got) != 7 || got[0].Key != "mine" || got[1].Key != corev1.TaintNodeNotReady || got[1].TolerationSeconds != nil {
		t.Fatalf("DaemonTolerations = %+v", got)
	}
	if spec.Tolerations[1].TolerationSeconds == nil {
		t.Fatal("DaemonTolerations modified its input")
	}
	if host := DaemonTolerations(&corev1.PodSpec{HostNetwork: true}); len(host) != 7 || host[6].Key != corev1.TaintNodeNetworkUnavailable {
		t.Fatalf("host network tolerations = %+v", host)
	}
}

func TestPinAndTarget(t *testing.T) {
	keep := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}, NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1}}}}
	a := PinToNode(keep, "n7")
	if a.PodAntiAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 || keep.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		t.Fatalf("PinToNode lost terms or modified its input: %+v", a)
	}
	if got := TargetNode(&corev1.Pod{Spec: corev1.PodSpec{Affinity: a}}); got != "n7" {
		t.Fatalf("TargetNode(pinned) = %q", got)
	}
	if got := TargetNode(&corev1.Pod{Spec: corev1.PodSpec{Affinity: a, NodeName: "n8"}}); got != "n8" {
		t.Fatalf("TargetNode(bound) = %q", got)
	}
	if got := TargetNode(&corev1.Pod{}); got != "" {
		t.Fatalf("TargetNode(free) = %q", got)
	}
}
