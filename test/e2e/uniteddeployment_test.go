package e2e

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/controller/uniteddeployment"
	"github.com/kruise-ng/kruise/test/harness"
)

// zonedNodes creates a private node per zone, labelled zone=<zone>; it returns the node of each zone.
func zonedNodes(t *testing.T, ns string, zones ...string) map[string]string {
	t.Helper()
	names := privateNodes(t, ns, len(zones))
	out := map[string]string{}
	for i, z := range zones {
		patch := fmt.Sprintf(`{"metadata":{"labels":{"zone":%q}}}`, z)
		if _, err := cs.CoreV1().Nodes().Patch(context.Background(), names[i], types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		out[z] = names[i]
	}
	return out
}

// privatePodSpec runs image on the namespace's private nodes (privateNodes).
func privatePodSpec(ns, image string) corev1.PodSpec {
	pod := podSpec(image)
	pod.NodeSelector = map[string]string{"e2e.kruise.io/ns": ns}
	pod.Tolerations = []corev1.Toleration{{Key: privateTaint, Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
	return pod
}

func udSubset(name string, replicas *intstr.IntOrString) appsv1alpha1.UnitedDeploymentSubset {
	return appsv1alpha1.UnitedDeploymentSubset{Name: name, Replicas: replicas, NodeSelectorTerm: corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{name}}}}}
}

// newUnitedDeployment is a UnitedDeployment labelled app=NAME of the template set by tmpl.
func newUnitedDeployment(ns, name string, replicas int32, tmpl func(labels map[string]string, pod corev1.PodTemplateSpec) appsv1alpha1.UnitedDeploymentSubsetTemplate,
	subsets ...appsv1alpha1.UnitedDeploymentSubset) *appsv1alpha1.UnitedDeployment {
	labels := map[string]string{"app": name}
	pod := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)}, Spec: privatePodSpec(ns, "registry.example/web:v1")}
	return &appsv1alpha1.UnitedDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1alpha1.UnitedDeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: tmpl(labels, pod), Topology: appsv1alpha1.UnitedDeploymentTopology{Subsets: subsets}}}
}

func cloneSetTemplate(labels map[string]string, pod corev1.PodTemplateSpec) appsv1alpha1.UnitedDeploymentSubsetTemplate {
	return appsv1alpha1.UnitedDeploymentSubsetTemplate{CloneSetTemplate: &appsv1alpha1.UnitedDeploymentCloneSetTemplate{
		ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)},
		Spec: appsv1alpha1.CloneSetSpec{Selector: &metav1.LabelSelector{MatchLabels: maps.Clone(labels)}, Template: pod,
			UpdateStrategy: appsv1alpha1.CloneSetUpdateStrategy{Type: appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType}}}}
}

func advancedStatefulSetTemplate(labels map[string]string, pod corev1.PodTemplateSpec) appsv1alpha1.UnitedDeploymentSubsetTemplate {
	return appsv1alpha1.UnitedDeploymentSubsetTemplate{AdvancedStatefulSetTemplate: &appsv1alpha1.UnitedDeploymentAdvancedStatefulSetTemplate{
		ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)},
		Spec: appsv1beta1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: maps.Clone(labels)}, Template: pod,
			PodManagementPolicy: appsv1.ParallelPodManagement}}}
}

func statefulSetTemplate(labels map[string]string, pod corev1.PodTemplateSpec) appsv1alpha1.UnitedDeploymentSubsetTemplate {
	return appsv1alpha1.UnitedDeploymentSubsetTemplate{StatefulSetTemplate: &appsv1alpha1.UnitedDeploymentStatefulSetTemplate{
		ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: maps.Clone(labels)}, Template: pod,
			PodManagementPolicy: appsv1.ParallelPodManagement}}}
}

func deploymentTemplate(labels map[string]string, pod corev1.PodTemplateSpec) appsv1alpha1.UnitedDeploymentSubsetTemplate {
	return appsv1alpha1.UnitedDeploymentSubsetTemplate{DeploymentTemplate: &appsv1alpha1.UnitedDeploymentDeploymentTemplate{
		ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)},
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: maps.Clone(labels)}, Template: pod}}}
}

// podsPerZone waits until the UnitedDeployment's running, ready pods are spread as want (zone →
// count), each on its zone's node and labelled with its subset, and its status says so.
func podsPerZone(t *testing.T, c client.Client, ud *appsv1alpha1.UnitedDeployment, nodes map[string]string, want map[string]int, what string) {
	t.Helper()
	var total int32
	for _, n := range want {
		total += int32(n)
	}
	harness.Eventually(t, 2*time.Minute, what, func() (bool, string) {
		got := map[string]int{}
		for _, p := range podsByName(t, ud.Namespace, "app="+ud.Name) {
			z := p.Labels[uniteddeployment.SubsetNameLabel]
			if p.Spec.NodeName != nodes[z] {
				return false, fmt.Sprintf("pod %s of subset %q on node %q, want %q", p.Name, z, p.Spec.NodeName, nodes[z])
			}
			if p.Status.Phase == corev1.PodRunning && condition(p, corev1.PodReady) == corev1.ConditionTrue {
				got[z]++
			}
		}
		cur := &appsv1alpha1.UnitedDeployment{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(ud), cur); err != nil {
			return false, err.Error()
		}
		st := cur.Status
		ok := maps.Equal(got, want) && st.ReadyReplicas == total && st.Replicas == total && st.ObservedGeneration == cur.Generation
		return ok, fmt.Sprintf("ready pods per subset %v; status replicas %d ready %d subsetReplicas %v observedGeneration %d/%d",
			got, st.Replicas, st.ReadyReplicas, st.SubsetReplicas, st.ObservedGeneration, cur.Generation)
	})
}

// subsetWorkloads are the names of the UnitedDeployment's subset workloads of list's kind, by subset.
func subsetWorkloads(t *testing.T, c client.Client, ud *appsv1alpha1.UnitedDeployment, list client.ObjectList) map[string][]string {
	t.Helper()
	if err := c.List(context.Background(), list, client.InNamespace(ud.Namespace)); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	objs, err := metaItems(list)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		for _, ref := range o.GetOwnerReferences() {
			if ref.Kind == "UnitedDeployment" && ref.Name == ud.Name && o.GetDeletionTimestamp() == nil {
				out[o.GetLabels()[uniteddeployment.SubsetNameLabel]] = append(out[o.GetLabels()[uniteddeployment.SubsetNameLabel]], o.GetName())
			}
		}
	}
	return out
}

func metaItems(list client.ObjectList) ([]metav1.Object, error) {
	var out []metav1.Object
	switch l := list.(type) {
	case *appsv1alpha1.CloneSetList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *appsv1beta1.StatefulSetList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *appsv1.StatefulSetList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *appsv1.DeploymentList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	default:
		return nil, fmt.Errorf("unexpected list %T", list)
	}
	return out, nil
}

// A UnitedDeployment of CloneSets: one CloneSet per zone named <ud>-<subset>-…, pods on their
// zone's node, the fixed subset gets its replicas and the other the rest; a manual partition
// holds a subset back during a template change while the other rolls in place; scaling through
// the scale subresource (as an HPA does) spreads the new replicas; a removed subset's CloneSet
// goes and its replicas move. kubectl kruise subsets shows the subsets in a table.
func TestUnitedDeploymentOfCloneSets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	nodes := zonedNodes(t, ns, "a", "b")
	ud := newUnitedDeployment(ns, "web", 4, cloneSetTemplate, udSubset("a", ptr.To(intstr.FromInt32(1))), udSubset("b", nil))
	if err := c.Create(ctx, ud); err != nil {
		t.Fatal(err)
	}
	podsPerZone(t, c, ud, nodes, map[string]int{"a": 1, "b": 3}, "1 pod in zone a, 3 in zone b")
	sets := subsetWorkloads(t, c, ud, &appsv1alpha1.CloneSetList{})
	if len(sets["a"]) != 1 || len(sets["b"]) != 1 || !strings.HasPrefix(sets["a"][0], "web-a-") || !strings.HasPrefix(sets["b"][0], "web-b-") {
		t.Fatalf("CloneSets %v, want one web-a-… and one web-b-…", sets)
	}
	bin, err := harness.BuildCommand("kubectl-kruise")
	if err != nil {
		t.Fatal(err)
	}
	out, code := kubectlKruise(t, bin, ns, "subsets", "ud/web")
	if fields := strings.Fields(out); code != 0 || !strings.Contains(strings.Join(fields, " "), "a 1 1 1 0 0 yes b 3 3 3 0 0 yes") {
		t.Errorf("kubectl kruise subsets ud/web (exit %d):\n%s", code, out)
	}
	before := podsByName(t, ns, "app=web")

	// A new image with subset b's partition at 3: a rolls in place, b keeps its pods at v1.
	patch := `{"spec":{"updateStrategy":{"manualUpdate":{"partitions":{"b":3}}},"template":{"cloneSetTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/web:v2"}]}}}}}}}`
	if err := c.Patch(ctx, ud, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 2*time.Minute, "subset a on v2, b held at v1 by its partition", func() (bool, string) {
		cur := &appsv1alpha1.UnitedDeployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ud), cur); err != nil {
			return false, err.Error()
		}
		images := map[string][]string{}
		for _, p := range podsByName(t, ns, "app=web") {
			images[p.Labels[uniteddeployment.SubsetNameLabel]] = append(images[p.Labels[uniteddeployment.SubsetNameLabel]], p.Spec.Containers[0].Image)
		}
		st := cur.Status
		ok := len(images["a"]) == 1 && images["a"][0] == "registry.example/web:v2" && len(images["b"]) == 3 && !strings.Contains(strings.Join(images["b"], ","), "v2") &&
			st.UpdatedReplicas == 1 && st.UpdatedReadyReplicas == 1 && st.UpdateStatus != nil && st.UpdateStatus.CurrentPartitions["b"] == 3 &&
			st.CurrentRevision != st.UpdateStatus.UpdatedRevision
		return ok, fmt.Sprintf("images %v, status %+v", images, st)
	})
	after := podsByName(t, ns, "app=web")
	for name, p := range after {
		if b, ok := before[name]; !ok || b.UID != p.UID {
			t.Errorf("pod %s was recreated: the CloneSet updates in place", name)
		}
	}

	// Scale through the scale subresource, as an HPA does: zone b takes the new replicas.
	scale := &autoscalingv1.Scale{}
	if err := c.SubResource("scale").Get(ctx, ud, scale); err != nil {
		t.Fatal(err)
	}
	if scale.Status.Selector != "app=web" || scale.Spec.Replicas != 4 {
		t.Errorf("scale %+v", scale)
	}
	scale.Spec.Replicas = 6
	if err := c.SubResource("scale").Update(ctx, ud, client.WithSubResourceBody(scale)); err != nil {
		t.Fatal(err)
	}
	podsPerZone(t, c, ud, nodes, map[string]int{"a": 1, "b": 5}, "scaled to 6: 1 in a, 5 in b")

	// Subset a removed: its CloneSet is deleted, b takes all replicas, the partition releases.
	patch = `{"spec":{"updateStrategy":{"manualUpdate":{"partitions":{"b":0}}},"topology":{"subsets":[{"name":"b","nodeSelectorTerm":{"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]}}]}}}`
	if err := c.Patch(ctx, ud, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	podsPerZone(t, c, ud, nodes, map[string]int{"b": 6}, "subset a removed: 6 in b")
	harness.Eventually(t, time.Minute, "subset a's CloneSet deleted, the rollout done", func() (bool, string) {
		sets := subsetWorkloads(t, c, ud, &appsv1alpha1.CloneSetList{})
		cur := &appsv1alpha1.UnitedDeployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ud), cur); err != nil {
			return false, err.Error()
		}
		return len(sets) == 1 && len(sets["b"]) == 1 && cur.Status.UpdatedReadyReplicas == 6 && cur.Status.CurrentRevision == cur.Status.UpdateStatus.UpdatedRevision,
			fmt.Sprintf("CloneSets %v, status %+v", sets, cur.Status)
	})
}

// A UnitedDeployment of each other kind (Advanced StatefulSet, StatefulSet, Deployment) makes one
// workload per subset with the allocated replicas, pods in their zone; a removed subset's workload
// is deleted and its replicas move; deleting the UnitedDeployment removes the rest.
func TestUnitedDeploymentOfEachKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		tmpl func(map[string]string, corev1.PodTemplateSpec) appsv1alpha1.UnitedDeploymentSubsetTemplate
		list func() client.ObjectList
	}{
		{"advanced-statefulset", advancedStatefulSetTemplate, func() client.ObjectList { return &appsv1beta1.StatefulSetList{} }},
		{"statefulset", statefulSetTemplate, func() client.ObjectList { return &appsv1.StatefulSetList{} }},
		{"deployment", deploymentTemplate, func() client.ObjectList { return &appsv1.DeploymentList{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := kruiseClient(t)
			ns := namespace(t)
			nodes := zonedNodes(t, ns, "a", "b")
			ud := newUnitedDeployment(ns, "db", 3, tc.tmpl, udSubset("a", ptr.To(intstr.FromString("34%"))), udSubset("b", nil))
			if err := c.Create(ctx, ud); err != nil {
				t.Fatal(err)
			}
			podsPerZone(t, c, ud, nodes, map[string]int{"a": 1, "b": 2}, "1 pod in zone a (34% of 3), 2 in zone b")
			workloads := subsetWorkloads(t, c, ud, tc.list())
			if len(workloads["a"]) != 1 || len(workloads["b"]) != 1 {
				t.Fatalf("workloads %v, want one per subset", workloads)
			}
			// Subset a removed: its workload is deleted, b's raised to all 3 replicas.
			patch := `{"spec":{"topology":{"subsets":[{"name":"b","nodeSelectorTerm":{"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]}}]}}}`
			if err := c.Patch(ctx, ud, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
				t.Fatal(err)
			}
			podsPerZone(t, c, ud, nodes, map[string]int{"b": 3}, "subset a removed: 3 pods in zone b")
			harness.Eventually(t, time.Minute, "subset a's workload deleted", func() (bool, string) {
				w := subsetWorkloads(t, c, ud, tc.list())
				return len(w) == 1 && len(w["b"]) == 1, fmt.Sprintf("%v", w)
			})
			if err := c.Delete(ctx, ud, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
				t.Fatal(err)
			}
			harness.Eventually(t, time.Minute, "the subset workloads deleted with the UnitedDeployment", func() (bool, string) {
				w := subsetWorkloads(t, c, ud, tc.list())
				return len(w) == 0, fmt.Sprintf("%v", w)
			})
		})
	}
}

// An Adaptive UnitedDeployment whose first subset has no room moves the stuck replicas to the
// next subset after rescheduleCriticalSeconds and marks the subset unschedulable.
func TestUnitedDeploymentAdaptive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	nodes := zonedNodes(t, ns, "b")
	a, b := udSubset("a", nil), udSubset("b", nil) // zone a has no node
	a.MaxReplicas = ptr.To(intstr.FromInt32(2))
	ud := newUnitedDeployment(ns, "adapt", 3, cloneSetTemplate, a, b)
	ud.Spec.Topology.ScheduleStrategy = appsv1alpha1.UnitedDeploymentScheduleStrategy{Type: appsv1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType,
		Adaptive: &appsv1alpha1.UnitedDeploymentAdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](3)}}
	if err := c.Create(ctx, ud); err != nil {
		t.Fatal(err)
	}
	podsPerZone(t, c, ud, nodes, map[string]int{"b": 3}, "all 3 pods in zone b once zone a's pods are stuck")
	cur := &appsv1alpha1.UnitedDeployment{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(ud), cur); err != nil {
		t.Fatal(err)
	}
	var marked bool
	for _, s := range cur.Status.SubsetStatuses {
		for _, cond := range s.Conditions {
			marked = marked || (s.Name == "a" && cond.Type == uniteddeployment.SubsetSchedulable && cond.Status == corev1.ConditionFalse)
		}
	}
	if !marked || cur.Status.SubsetReplicas["a"] != 0 {
		t.Errorf("subset a: replicas %d, statuses %+v; want 0 and Schedulable=False", cur.Status.SubsetReplicas["a"], cur.Status.SubsetStatuses)
	}
	var names []string
	for name := range podsByName(t, ns, "app=adapt") {
		names = append(names, name)
	}
	sort.Strings(names)
	t.Logf("pods %v", names)
}

// With reserveUnschedulablePods, the pods of a subset without room stay (labelled reserved) while
// as many stand-ins run in the next subset; once the subset gets a node and its pods have been
// ready for unschedulableDuration, they are released and the stand-ins go.
func TestUnitedDeploymentReservesUnschedulablePods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	nodes := zonedNodes(t, ns, "b")
	ud := newUnitedDeployment(ns, "reserve", 2, cloneSetTemplate, udSubset("a", nil), udSubset("b", nil)) // zone a has no node yet
	ud.Spec.Topology.ScheduleStrategy = appsv1alpha1.UnitedDeploymentScheduleStrategy{Type: appsv1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType,
		Adaptive: &appsv1alpha1.UnitedDeploymentAdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](3), UnschedulableDuration: ptr.To[int32](5),
			ReserveUnschedulablePods: true}}
	if err := c.Create(ctx, ud); err != nil {
		t.Fatal(err)
	}
	// perZone counts the pods by subset: running and ready, and labelled reserved.
	perZone := func() (ready, reserved map[string]int, seen string) {
		ready, reserved = map[string]int{}, map[string]int{}
		var all []string
		for _, p := range podsByName(t, ns, "app=reserve") {
			z := p.Labels[uniteddeployment.SubsetNameLabel]
			if p.Status.Phase == corev1.PodRunning && condition(p, corev1.PodReady) == corev1.ConditionTrue {
				ready[z]++
			}
			if p.Labels[uniteddeployment.ReservedLabel] == "true" {
				reserved[z]++
			}
			all = append(all, fmt.Sprintf("%s(%s,%s,reserved=%s)", p.Name, p.Spec.NodeName, p.Status.Phase, p.Labels[uniteddeployment.ReservedLabel]))
		}
		sort.Strings(all)
		return ready, reserved, strings.Join(all, " ")
	}
	status := func() appsv1alpha1.UnitedDeploymentStatus {
		cur := &appsv1alpha1.UnitedDeployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ud), cur); err != nil {
			t.Fatal(err)
		}
		return cur.Status
	}
	harness.Eventually(t, time.Minute, "zone a's 2 pods reserved, 2 stand-ins ready in zone b", func() (bool, string) {
		ready, reserved, seen := perZone()
		st := status()
		ok := ready["b"] == 2 && reserved["a"] == 2 && st.ReservedPods == 2 && st.SubsetReplicas["a"] == 2 && st.SubsetReplicas["b"] == 2 &&
			st.LabelSelector == "app=reserve,"+uniteddeployment.ReservedLabel+"=false"
		return ok, fmt.Sprintf("pods %s; status reserved %d subsetReplicas %v selector %q", seen, st.ReservedPods, st.SubsetReplicas, st.LabelSelector)
	})

	// Zone a gets a node: its pods run, are released after 5 s ready, and the stand-ins go.
	nodes["a"] = zonedNodes(t, ns, "a")["a"]
	harness.Eventually(t, time.Minute, "zone a's pods released, the stand-ins in zone b gone", func() (bool, string) {
		ready, reserved, seen := perZone()
		st := status()
		ok := ready["a"] == 2 && ready["b"] == 0 && len(reserved) == 0 && st.ReservedPods == 0 && st.SubsetReplicas["b"] == 0 &&
			strings.Count(seen, "(") == 2
		return ok, fmt.Sprintf("pods %s; status reserved %d subsetReplicas %v", seen, st.ReservedPods, st.SubsetReplicas)
	})
	podsPerZone(t, c, ud, nodes, map[string]int{"a": 2}, "2 pods in zone a")
}

// An elastic UnitedDeployment of Advanced StatefulSets (minReplicas/maxReplicas) fills the first
// subset up to its maximum, the rest to the next; a template change with a manual partition rolls
// each subset's pods above its partition in place, ordinals below it stay.
func TestUnitedDeploymentElasticAdvancedStatefulSets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	nodes := zonedNodes(t, ns, "a", "b")
	a, b := udSubset("a", nil), udSubset("b", nil)
	a.MinReplicas, a.MaxReplicas = ptr.To(intstr.FromInt32(1)), ptr.To(intstr.FromInt32(2))
	ud := newUnitedDeployment(ns, "elastic", 4, advancedStatefulSetTemplate, a, b)
	ud.Spec.Template.AdvancedStatefulSetTemplate.Spec.UpdateStrategy.RollingUpdate = &appsv1beta1.StatefulSetRollingUpdateStrategy{
		PodUpdatePolicy: appsv1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy}
	// An Advanced StatefulSet updating in place needs the readiness gate (its admission says so).
	ud.Spec.Template.AdvancedStatefulSetTemplate.Spec.Template.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
	if err := c.Create(ctx, ud); err != nil {
		t.Fatal(err)
	}
	podsPerZone(t, c, ud, nodes, map[string]int{"a": 2, "b": 2}, "zone a filled to its maximum 2, the other 2 in zone b")
	before := podsByName(t, ns, "app=elastic")

	patch := `{"spec":{"updateStrategy":{"manualUpdate":{"partitions":{"a":1,"b":0}}},"template":{"advancedStatefulSetTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/web:v2"}]}}}}}}}`
	if err := c.Patch(ctx, ud, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 2*time.Minute, "ordinal 1 of zone a and both of zone b on v2 in place, ordinal 0 of zone a on v1", func() (bool, string) {
		var v2, seen []string
		for name, p := range podsByName(t, ns, "app=elastic") {
			if b, ok := before[name]; !ok || b.UID != p.UID {
				return false, "pod " + name + " was recreated"
			}
			seen = append(seen, name+"="+p.Spec.Containers[0].Image)
			if p.Spec.Containers[0].Image == "registry.example/web:v2" && condition(p, corev1.PodReady) == corev1.ConditionTrue {
				v2 = append(v2, p.Labels[uniteddeployment.SubsetNameLabel]+":"+name[strings.LastIndexByte(name, '-')+1:])
			}
		}
		sort.Strings(v2)
		return strings.Join(v2, ",") == "a:1,b:0,b:1", strings.Join(seen, " ")
	})
}
