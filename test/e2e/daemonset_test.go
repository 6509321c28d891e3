package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/nodeeligibility"
	"github.com/kruise-ng/kruise/pkg/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// privateTaint keeps other tests' pods off a test's own nodes; the test's daemons tolerate it.
const privateTaint = "e2e.kruise.io/private"

// privateNodes creates n kwok nodes of the test's own, labelled e2e.kruise.io/ns=<ns> and tainted
// privateTaint=<ns>:NoSchedule, deleted when the test ends; by ascending name.
func privateNodes(t *testing.T, ns string, n int, extra ...corev1.Taint) []string {
	t.Helper()
	var names []string
	suffix := utilrand.String(4)
	for i := range n {
		node := sandbox.FakeNode(fmt.Sprintf("kwok-%s-%d", suffix, i), fmt.Sprintf("10.251.%d.%d", len(suffix)+i/200, 1+i%200))
		node.Labels["e2e.kruise.io/ns"] = ns
		node.Spec.Taints = append([]corev1.Taint{{Key: privateTaint, Value: ns, Effect: corev1.TaintEffectNoSchedule}}, extra...)
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, node.Name)
		t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	}
	return names
}

// newDaemonSet is an Advanced DaemonSet labelled app=NAME that runs on the namespace's private nodes.
func newDaemonSet(ns, name string) *appsv1beta1.DaemonSet {
	labels := map[string]string{"app": name}
	pod := podSpec("registry.example/agent:v1")
	pod.NodeSelector = map[string]string{"e2e.kruise.io/ns": ns}
	pod.Tolerations = []corev1.Toleration{{Key: privateTaint, Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
	return &appsv1beta1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1beta1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)}, Spec: pod}}}
}

// daemonPods maps node name → the names of the daemon set's live pods pinned there.
func daemonPods(t *testing.T, ns, name string) map[string][]*corev1.Pod {
	t.Helper()
	out := map[string][]*corev1.Pod{}
	for _, p := range podsByName(t, ns, "app="+name) {
		out[nodeeligibility.TargetNode(p)] = append(out[nodeeligibility.TargetNode(p)], p)
	}
	return out
}

// onNodes waits until the set runs exactly one running, ready pod on each of nodes and none elsewhere.
func onNodes(t *testing.T, ns, name string, nodes ...string) map[string]*corev1.Pod {
	t.Helper()
	var got map[string]*corev1.Pod
	harness.Eventually(t, 60*time.Second, fmt.Sprintf("one ready pod on each of %v", nodes), func() (bool, string) {
		by := daemonPods(t, ns, name)
		got = map[string]*corev1.Pod{}
		var seen []string
		ok := len(by) == len(nodes)
		for node, pods := range by {
			seen = append(seen, fmt.Sprintf("%s:%d", node, len(pods)))
			ok = ok && slices.Contains(nodes, node) && len(pods) == 1 && condition(pods[0], corev1.PodReady) == corev1.ConditionTrue
			got[node] = pods[0]
		}
		sort.Strings(seen)
		return ok, strings.Join(seen, " ")
	})
	return got
}

func patchNode(t *testing.T, name, patch string) {
	t.Helper()
	if _, err := cs.CoreV1().Nodes().Patch(context.Background(), name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// An Advanced DaemonSet runs one pod on every node its template fits, pinned there by node
// affinity with the daemon tolerations; a node whose NoSchedule taint is removed gets its pod
// (kruise#1199), a NoExecute taint or a label change that unselects a node removes it, and a failed
// pod is replaced.
func TestAdvancedDaemonSetFollowsNodes(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	nodes := privateNodes(t, ns, 2)
	blocked := privateNodes(t, ns, 1, corev1.Taint{Key: "e2e.kruise.io/blocked", Effect: corev1.TaintEffectNoSchedule})[0]
	ds := newDaemonSet(ns, "agent")
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	pods := onNodes(t, ns, "agent", nodes...)
	for node, p := range pods {
		terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(terms) != 1 || terms[0].MatchFields[0].Values[0] != node || p.Spec.NodeName != node ||
			!slices.ContainsFunc(p.Spec.Tolerations, func(tl corev1.Toleration) bool { return tl.Key == corev1.TaintNodeUnschedulable }) ||
			p.Labels["controller-revision-hash"] == "" || !strings.HasPrefix(p.Name, "agent-") {
			t.Errorf("pod %s: affinity %v, node %q, tolerations %v, labels %v", p.Name, terms, p.Spec.NodeName, p.Spec.Tolerations, p.Labels)
		}
	}
	harness.Eventually(t, 30*time.Second, "status", func() (bool, string) {
		got := &appsv1beta1.DaemonSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ds), got); err != nil {
			return false, err.Error()
		}
		st := got.Status
		return st.DesiredNumberScheduled == 2 && st.CurrentNumberScheduled == 2 && st.NumberReady == 2 && st.NumberAvailable == 2 &&
			st.UpdatedNumberScheduled == 2 && st.UpdateRevision == pods[nodes[0]].Labels["controller-revision-hash"] && st.ObservedGeneration == got.Generation,
			fmt.Sprintf("%+v", st)
	})

	patchNode(t, blocked, `{"spec":{"taints":[{"key":"`+privateTaint+`","value":"`+ns+`","effect":"NoSchedule"}]}}`)
	onNodes(t, ns, "agent", append(slices.Clone(nodes), blocked)...)

	patchNode(t, nodes[0], `{"spec":{"taints":[{"key":"`+privateTaint+`","value":"`+ns+`","effect":"NoSchedule"},{"key":"e2e.kruise.io/evict","effect":"NoExecute"}]}}`)
	patchNode(t, nodes[1], `{"metadata":{"labels":{"e2e.kruise.io/ns":"elsewhere"}}}`)
	pods = onNodes(t, ns, "agent", blocked)

	failed := pods[blocked].DeepCopy()
	failed.Status.Phase = corev1.PodFailed
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, failed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, "the failed pod replaced", func() (bool, string) {
		pods := daemonPods(t, ns, "agent")[blocked]
		return len(pods) == 1 && pods[0].UID != failed.UID && condition(pods[0], corev1.PodReady) == corev1.ConditionTrue, fmt.Sprint(len(pods))
	})
}

// An InPlaceIfPossible rollout changes images in place (same pod UIDs) node by node within
// maxUnavailable, keeps partition nodes (the lowest names) old, and recreates pods for a change
// that cannot be made in place.
func TestAdvancedDaemonSetRollsOutInPlace(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	nodes := privateNodes(t, ns, 4)
	ds := newDaemonSet(ns, "inplace")
	ds.Spec.UpdateStrategy = appsv1beta1.DaemonSetUpdateStrategy{Type: appsv1beta1.DaemonSetRollingUpdateStrategyType,
		RollingUpdate: &appsv1beta1.DaemonSetRollingUpdate{Type: appsv1beta1.DaemonSetInplaceRollingUpdateType,
			MaxUnavailable: ptr.To(intstr.FromInt32(2)), Partition: ptr.To(intstr.FromInt32(1))}}
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	before := onNodes(t, ns, "inplace", nodes...)
	notReady, stop := watchNotReady(t, ns, "app=inplace")
	if err := c.Patch(ctx, ds, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/agent:v2"}]}}}}`))); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 90*time.Second, "3 nodes updated in place, the lowest kept by the partition", func() (bool, string) {
		var seen []string
		ok := true
		for node, pods := range daemonPods(t, ns, "inplace") {
			p := pods[0]
			img := p.Spec.Containers[0].Image
			seen = append(seen, node+"="+img)
			want := "registry.example/agent:v2"
			if node == nodes[0] {
				want = "registry.example/agent:v1"
			}
			ok = ok && len(pods) == 1 && img == want && p.UID == before[node].UID && condition(p, corev1.PodReady) == corev1.ConditionTrue
		}
		sort.Strings(seen)
		return ok, strings.Join(seen, " ")
	})
	stop()
	if peak := notReady(); peak > 2 {
		t.Errorf("up to %d pods were NotReady at once; maxUnavailable is 2", peak)
	}
	// An env change cannot be made in place: every pod is recreated, the partition lifted.
	if err := c.Patch(ctx, ds, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}},"template":{"spec":{"containers":[{"name":"app","image":"registry.example/agent:v2","env":[{"name":"MODE","value":"b"}]}]}}}}`))); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 90*time.Second, "every pod recreated with the env", func() (bool, string) {
		by := daemonPods(t, ns, "inplace")
		ok := len(by) == len(nodes)
		var seen []string
		for node, pods := range by {
			p := pods[0]
			seen = append(seen, fmt.Sprintf("%s:%d:%v", node, len(pods), p.UID != before[node].UID))
			ok = ok && len(pods) == 1 && p.UID != before[node].UID && len(p.Spec.Containers[0].Env) == 1 && condition(p, corev1.PodReady) == corev1.ConditionTrue
		}
		sort.Strings(seen)
		return ok, strings.Join(seen, " ")
	})
}
