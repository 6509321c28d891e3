package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
	"github.com/kruise-ng/kruise/test/harness"
)

// privateTaint keeps other tests' pods off a test's own nodes; the test's daemons tolerate it.
const privateTaint = "e2e.kruise.io/private"

// privateNodeSeq numbers the private nodes of the test run.
var privateNodeSeq atomic.Int32

// privateNodes creates n kwok nodes of the test's own, labelled e2e.kruise.io/ns=<ns> and tainted
// privateTaint=<ns>:NoSchedule, deleted when the test ends; by ascending name.
func privateNodes(t *testing.T, ns string, n int, extra ...corev1.Taint) []string {
	t.Helper()
	var names []string
	suffix := utilrand.String(4)
	for i := range n {
		seq := privateNodeSeq.Add(1) // a distinct InternalIP per node of the run
		node := sandbox.FakeNode(fmt.Sprintf("kwok-%s-%d", suffix, i), fmt.Sprintf("10.251.%d.%d", seq/250, 1+seq%250))
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
	t.Parallel()
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
	// OpenKruise's Warning for it.
	harness.Eventually(t, 10*time.Second, "a FailedDaemonPod event naming the failed pod", func() (bool, string) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedDaemonPod"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, failed.Name) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d FailedDaemonPod events", len(evs.Items))
	})
}

// An InPlaceIfPossible rollout changes images in place (same pod UIDs) node by node within
// maxUnavailable, keeps partition nodes (the lowest names) old, and recreates pods for a change
// that cannot be made in place.
func TestAdvancedDaemonSetRollsOutInPlace(t *testing.T) {
	t.Parallel()
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

// setDaemonSet merge-patches the set.
func setDaemonSet(t *testing.T, c client.Client, ds *appsv1beta1.DaemonSet, patch string) {
	t.Helper()
	if err := c.Patch(context.Background(), ds, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// imagesOn waits until the set's pods run the given image per node (one ready pod each), and
// returns them.
func imagesOn(t *testing.T, ns, name string, want map[string]string) map[string]*corev1.Pod {
	t.Helper()
	out := map[string]*corev1.Pod{}
	harness.Eventually(t, 90*time.Second, fmt.Sprintf("images %v", want), func() (bool, string) {
		by := daemonPods(t, ns, name)
		ok := len(by) == len(want)
		var seen []string
		for node, pods := range by {
			p := pods[0]
			seen = append(seen, fmt.Sprintf("%s:%d:%s", node, len(pods), p.Spec.Containers[0].Image))
			ok = ok && len(pods) == 1 && p.Spec.Containers[0].Image == want[node] && condition(p, corev1.PodReady) == corev1.ConditionTrue
			out[node] = p
		}
		sort.Strings(seen)
		return ok, strings.Join(seen, " ")
	})
	return out
}

// A node-label canary with surge: only labelled nodes get the new pod, created beside the old one
// (never more than maxSurge nodes with two pods, the old pod deleted only once the new one has
// been ready for minReadySeconds); a node whose label is removed goes back to the old revision
// (kruise#1871).
func TestAdvancedDaemonSetCanarySurge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	nodes := privateNodes(t, ns, 4)
	ds := newDaemonSet(ns, "canary")
	ds.Spec.MinReadySeconds = 2
	ds.Spec.UpdateStrategy = appsv1beta1.DaemonSetUpdateStrategy{Type: appsv1beta1.DaemonSetRollingUpdateStrategyType,
		RollingUpdate: &appsv1beta1.DaemonSetRollingUpdate{MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"e2e.kruise.io/canary": "true"}}}}
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	v1 := "registry.example/agent:v1"
	before := onNodes(t, ns, "canary", nodes...)
	// Old pods not yet available for minReadySeconds would be replaced at once, beyond maxSurge.
	harness.Eventually(t, 30*time.Second, "4 available", func() (bool, string) {
		got := &appsv1beta1.DaemonSet{}
		err := c.Get(ctx, client.ObjectKeyFromObject(ds), got)
		return err == nil && got.Status.NumberAvailable == 4, fmt.Sprintf("%+v %v", got.Status, err)
	})
	for _, n := range nodes[2:] {
		patchNode(t, n, `{"metadata":{"labels":{"e2e.kruise.io/canary":"true"}}}`)
	}
	peak := watchDaemonPeak(t, ns, "app=canary")
	setDaemonSet(t, c, ds, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/agent:v2"}]}}}}`)
	v2 := "registry.example/agent:v2"
	after := imagesOn(t, ns, "canary", map[string]string{nodes[0]: v1, nodes[1]: v1, nodes[2]: v2, nodes[3]: v2})
	if got := peak(); got > 1 {
		t.Errorf("%d nodes ran two daemon pods at once; maxSurge is 1", got)
	}
	for _, n := range nodes[:2] {
		if after[n].UID != before[n].UID {
			t.Errorf("node %s outside the canary: pod %s replaced", n, before[n].Name)
		}
	}
	patchNode(t, nodes[3], `{"metadata":{"labels":{"e2e.kruise.io/canary":null}}}`)
	imagesOn(t, ns, "canary", map[string]string{nodes[0]: v1, nodes[1]: v1, nodes[2]: v2, nodes[3]: v1})
}

// watchDaemonPeak records the most nodes that ran two live pods of the selector at once.
func watchDaemonPeak(t *testing.T, ns, selector string) func() int {
	t.Helper()
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		peak := 0
		for {
			select {
			case <-stop:
				done <- peak
				return
			case <-time.After(200 * time.Millisecond):
			}
			list, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				continue
			}
			per := map[string]int{}
			two := 0
			for i := range list.Items {
				if list.Items[i].DeletionTimestamp == nil {
					if per[nodeeligibility.TargetNode(&list.Items[i])]++; per[nodeeligibility.TargetNode(&list.Items[i])] == 2 {
						two++
					}
				}
			}
			peak = max(peak, two)
		}
	}()
	var once bool
	var result int
	t.Cleanup(func() {
		if !once {
			close(stop)
			<-done
		}
	})
	return func() int {
		if !once {
			once = true
			close(stop)
			result = <-done
		}
		return result
	}
}

// With a preDelete hook, a recreating rollout holds each pod in PreparingDelete until the hook's
// label goes, one node at a time (maxUnavailable 1), and only then replaces it.
func TestAdvancedDaemonSetPreDeleteOneByOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	nodes := privateNodes(t, ns, 2)
	ds := newDaemonSet(ns, "hooked")
	ds.Spec.Template.Labels["e2e.kruise.io/drain"] = "wait"
	ds.Spec.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{LabelsHandler: map[string]string{"e2e.kruise.io/drain": "wait"}}}
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	before := onNodes(t, ns, "hooked", nodes...)
	setDaemonSet(t, c, ds, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/agent:v1","env":[{"name":"MODE","value":"b"}]}]}}}}`)
	for round := range nodes {
		var held *corev1.Pod
		harness.Eventually(t, 60*time.Second, fmt.Sprintf("round %d: one pod held in PreparingDelete", round), func() (bool, string) {
			var states []string
			held = nil
			count := 0
			for _, pods := range daemonPods(t, ns, "hooked") {
				for _, p := range pods {
					states = append(states, p.Name+"="+p.Labels[appspub.LifecycleStateKey])
					if p.Labels[appspub.LifecycleStateKey] == string(appspub.LifecycleStatePreparingDelete) {
						held, count = p, count+1
					}
				}
			}
			sort.Strings(states)
			return count == 1, strings.Join(states, " ")
		})
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, held.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"e2e.kruise.io/drain":null}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		node := nodeeligibility.TargetNode(held)
		harness.Eventually(t, 60*time.Second, "the released pod replaced", func() (bool, string) {
			pods := daemonPods(t, ns, "hooked")[node]
			return len(pods) == 1 && pods[0].UID != before[node].UID && len(pods[0].Spec.Containers[0].Env) == 1 &&
				condition(pods[0], corev1.PodReady) == corev1.ConditionTrue, fmt.Sprint(len(pods))
		})
	}
}

// A v1alpha1 Advanced DaemonSet is stored as v1beta1 and read back the same; its status carries
// daemonSetHash, v1beta1's updateRevision.
func TestAdvancedDaemonSetV1alpha1RoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	nodes := privateNodes(t, ns, 1)
	beta := newDaemonSet(ns, "alpha")
	alpha := &appsv1alpha1.DaemonSet{}
	if err := alpha.ConvertFrom(beta); err != nil {
		t.Fatal(err)
	}
	alpha.Spec.UpdateStrategy.RollingUpdate = &appsv1alpha1.DaemonSetRollingUpdate{Partition: ptr.To(intstr.FromInt32(0))}
	if err := c.Create(ctx, alpha); err != nil {
		t.Fatal(err)
	}
	pods := onNodes(t, ns, "alpha", nodes...)
	harness.Eventually(t, 30*time.Second, "v1alpha1 status", func() (bool, string) {
		got := &appsv1alpha1.DaemonSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(alpha), got); err != nil {
			return false, err.Error()
		}
		hash := pods[nodes[0]].Labels["controller-revision-hash"]
		return got.Status.DaemonSetHash == hash && got.Status.NumberAvailable == 1 && got.Spec.Template.Spec.NodeSelector["e2e.kruise.io/ns"] == ns,
			fmt.Sprintf("%+v (pod hash %s)", got.Status, hash)
	})
	stored := &appsv1beta1.DaemonSet{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(alpha), stored); err != nil || stored.Status.UpdateRevision != pods[nodes[0]].Labels["controller-revision-hash"] {
		t.Fatalf("v1beta1 view: %+v, %v", stored.Status, err)
	}
}
