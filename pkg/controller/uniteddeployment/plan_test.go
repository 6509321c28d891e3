package uniteddeployment

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/test/compat"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// TestTakeoverPlansNothing: the UnitedDeployment OpenKruise v1.9.0 ran, with its CloneSets and pods,
// hashes to OpenKruise's revision, plans no write, and gets OpenKruise's status.
func TestTakeoverPlansNothing(t *testing.T) {
	dir := filepath.Join(compat.OracleDir(filepath.Join("..", "..", "..")), "takeover", "workloads")
	var uds appsv1alpha1.UnitedDeploymentList
	var sets appsv1alpha1.CloneSetList
	var revs appsv1.ControllerRevisionList
	var pods corev1.PodList
	readList(t, filepath.Join(dir, "uniteddeployments.apps.kruise.io.yaml"), &uds)
	readList(t, filepath.Join(dir, "clonesets.apps.kruise.io.yaml"), &sets)
	readList(t, filepath.Join(dir, "controllerrevisions.yaml"), &revs)
	readList(t, filepath.Join(dir, "pods.yaml"), &pods)
	ud := &uds.Items[0]

	rev, err := revision.New(ud, gvk, revision.Input{Object: &ud.Spec.Template}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var theirs *appsv1.ControllerRevision
	for i := range revs.Items {
		if metav1.IsControlledBy(&revs.Items[i], ud) {
			theirs = &revs.Items[i]
		}
	}
	if theirs == nil || rev.Name != theirs.Name || !revision.Equal(rev, theirs) || !equality.Semantic.DeepEqual(rev.Labels, theirs.Labels) ||
		len(rev.Annotations) != 0 {
		t.Fatalf("revision %s %v %v, OpenKruise wrote %v", rev.Name, rev.Labels, rev.Annotations, theirs)
	}

	s := Snapshot{UD: ud, Revision: rev.Name, Current: ud.Status.CurrentRevision, Now: t0, Pods: map[string][]*corev1.Pod{}}
	for i := range sets.Items {
		if metav1.IsControlledBy(&sets.Items[i], ud) {
			s.Workloads = append(s.Workloads, &sets.Items[i])
		}
	}
	for i := range pods.Items {
		if name, ok := pods.Items[i].Labels[SubsetNameLabel]; ok {
			s.Pods[name] = append(s.Pods[name], &pods.Items[i])
		}
	}
	p, err := Compute(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Creates)+len(p.Updates)+len(p.Deletes) != 0 {
		t.Fatalf("taking over writes workloads: creates %d, updates %v, deletes %v", len(p.Creates), p.Updates, p.Deletes)
	}
	if !equality.Semantic.DeepEqual(p.Status, ud.Status) {
		t.Errorf("status differs from OpenKruise's:\n%s", diff.Diff(ud.Status, p.Status))
	}
}

func testUD(subsets ...appsv1alpha1.UnitedDeploymentSubset) *appsv1alpha1.UnitedDeployment {
	labels := map[string]string{"app": "web"}
	return &appsv1alpha1.UnitedDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "ud-uid", Generation: 2},
		Spec: appsv1alpha1.UnitedDeploymentSpec{
			Replicas: ptr.To[int32](5),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: appsv1alpha1.UnitedDeploymentSubsetTemplate{CloneSetTemplate: &appsv1alpha1.UnitedDeploymentCloneSetTemplate{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"note": "x"}},
				Spec: appsv1alpha1.CloneSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}},
			}},
			Topology: appsv1alpha1.UnitedDeploymentTopology{Subsets: subsets},
		},
	}
}

func zone(name string, replicas *intstr.IntOrString) appsv1alpha1.UnitedDeploymentSubset {
	return appsv1alpha1.UnitedDeploymentSubset{Name: name, Replicas: replicas,
		NodeSelectorTerm: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{name}}}}}
}

// existing turns planned creations into the workloads the API server would hold.
func existing(objs []client.Object, age time.Duration) []client.Object {
	out := make([]client.Object, len(objs))
	for i, o := range objs {
		c := o.DeepCopyObject().(client.Object)
		c.SetName(c.GetGenerateName() + "abcde"[:i+1])
		c.SetCreationTimestamp(metav1.NewTime(t0.Add(-age)))
		out[i] = c
	}
	return out
}

func TestCreatesOneWorkloadPerSubset(t *testing.T) {
	a := zone("a", n(2))
	a.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
	a.Patch = runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"tier":"spot"}}}`)}
	ud := testUD(a, zone("b", nil))
	ud.Spec.UpdateStrategy.ManualUpdate = &appsv1alpha1.UnitedDeploymentManualUpdate{Partitions: map[string]int32{"a": 5, "b": 1}}
	p, err := Compute(Snapshot{UD: ud, Revision: "web-rev1", Current: "web-rev1", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Creates) != 2 || len(p.Updates)+len(p.Deletes) != 0 {
		t.Fatalf("plan %+v", p)
	}
	csA := p.Creates[0].(*appsv1alpha1.CloneSet)
	csB := p.Creates[1].(*appsv1alpha1.CloneSet)
	if csA.GenerateName != "web-a-" || csA.Namespace != "ns" || !metav1.IsControlledBy(csA, ud) {
		t.Errorf("metadata %+v", csA.ObjectMeta)
	}
	for k, v := range map[string]string{"app": "web", RevisionLabel: "web-rev1", SubsetNameLabel: "a"} {
		if csA.Labels[k] != v || csA.Spec.Template.Labels[k] != v {
			t.Errorf("label %s: workload %q, template %q, want %q", k, csA.Labels[k], csA.Spec.Template.Labels[k], v)
		}
	}
	if csA.Spec.Template.Labels["tier"] != "spot" || csA.Annotations[SubsetPatchAnnotation] != string(a.Patch.Raw) || csA.Annotations["note"] != "x" {
		t.Errorf("patch not applied/recorded: %v %v", csA.Spec.Template.Labels, csA.Annotations)
	}
	if got := csB.Annotations[SubsetPatchAnnotation]; got != "" {
		t.Errorf("subset b patch annotation %q", got)
	}
	if csA.Spec.Selector.MatchLabels[SubsetNameLabel] != "a" || ud.Spec.Selector.MatchLabels[SubsetNameLabel] != "" {
		t.Errorf("selector %v (UnitedDeployment's %v)", csA.Spec.Selector, ud.Spec.Selector)
	}
	if *csA.Spec.Replicas != 2 || *csB.Spec.Replicas != 3 {
		t.Errorf("replicas %d/%d, want 2/3", *csA.Spec.Replicas, *csB.Spec.Replicas)
	}
	if csA.Spec.UpdateStrategy.Partition.IntValue() != 2 || csB.Spec.UpdateStrategy.Partition.IntValue() != 1 {
		t.Errorf("partitions %v/%v, want 2 (capped at replicas) and 1", csA.Spec.UpdateStrategy.Partition, csB.Spec.UpdateStrategy.Partition)
	}
	terms := csA.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || terms[0].MatchExpressions[0].Values[0] != "a" || len(csA.Spec.Template.Spec.Tolerations) != 1 {
		t.Errorf("placement %+v %+v", terms, csA.Spec.Template.Spec.Tolerations)
	}
	if p.Status.SubsetReplicas["a"] != 2 || p.Status.UpdateStatus.CurrentPartitions["a"] != 2 || p.Status.LabelSelector != "app=web" ||
		p.Status.ObservedGeneration != 2 || len(p.Status.SubsetStatuses) != 2 {
		t.Errorf("status %+v", p.Status)
	}
	if c := cond(p.Status, SubsetProvisioned); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("SubsetProvisioned %+v", c)
	}

	// The same spec over the created workloads plans nothing.
	again, err := Compute(Snapshot{UD: ud, Revision: "web-rev1", Current: "web-rev1", Now: t0, Workloads: existing(p.Creates, time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Creates)+len(again.Updates)+len(again.Deletes) != 0 {
		t.Fatalf("steady state writes: %+v", again)
	}
}

func TestWritesOnlyWhatChanged(t *testing.T) {
	ud := testUD(zone("a", n(2)), zone("b", nil))
	first, _ := Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: t0})
	objs := existing(first.Creates, time.Minute)
	for _, tc := range []struct {
		name string
		edit func(ud *appsv1alpha1.UnitedDeployment)
		rev  string
		want map[string]string // subset → reason fragment
	}{
		{"new revision", func(*appsv1alpha1.UnitedDeployment) {}, "r2", map[string]string{"a": "revision", "b": "revision"}},
		{"replicas", func(ud *appsv1alpha1.UnitedDeployment) { ud.Spec.Replicas = ptr.To[int32](6) }, "r1", map[string]string{"b": "replicas 3 → 4"}},
		{"partition", func(ud *appsv1alpha1.UnitedDeployment) {
			ud.Spec.UpdateStrategy.ManualUpdate = &appsv1alpha1.UnitedDeploymentManualUpdate{Partitions: map[string]int32{"b": 2}}
		}, "r1", map[string]string{"b": "partition 0 → 2"}},
		{"patch", func(ud *appsv1alpha1.UnitedDeployment) {
			ud.Spec.Topology.Subsets[0].Patch = runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"x":"y"}}}`)}
		}, "r1", map[string]string{"a": "patch"}},
		{"node terms", func(ud *appsv1alpha1.UnitedDeployment) {
			ud.Spec.Topology.Subsets[1].NodeSelectorTerm.MatchExpressions[0].Values = []string{"c"}
		}, "r1", map[string]string{"b": "node terms"}},
		{"tolerations", func(ud *appsv1alpha1.UnitedDeployment) {
			ud.Spec.Topology.Subsets[0].Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
		}, "r1", map[string]string{"a": "tolerations"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := ud.DeepCopy()
			tc.edit(u)
			p, err := Compute(Snapshot{UD: u, Revision: tc.rev, Current: "r1", Now: t0, Workloads: objs})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, w := range p.Updates {
				got[w.Obj.GetLabels()[SubsetNameLabel]] = w.Why
			}
			if len(got) != len(tc.want) || len(p.Creates)+len(p.Deletes) != 0 {
				t.Fatalf("updates %v, creates %d, deletes %d; want %v", got, len(p.Creates), len(p.Deletes), tc.want)
			}
			for name, frag := range tc.want {
				if !strings.Contains(got[name], frag) {
					t.Errorf("subset %s: %q, want %q", name, got[name], frag)
				}
			}
			for _, w := range p.Updates {
				if w.Obj.GetName() == "" || w.Obj.GetResourceVersion() != objs[0].GetResourceVersion() {
					t.Errorf("an update must keep the workload's identity: %s", w.Obj.GetName())
				}
			}
		})
	}
}

func TestDeletesDuplicatesRemovedSubsetsAndOtherKinds(t *testing.T) {
	ud := testUD(zone("a", nil), zone("b", nil))
	first, _ := Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: t0})
	old := existing(first.Creates, time.Hour)
	dup := existing(first.Creates[:1], time.Minute)[0]
	dup.SetName("web-a-dup")
	gone := testUD(zone("gone", nil))
	gonePlan, _ := Compute(Snapshot{UD: gone, Revision: "r1", Current: "r1", Now: t0})
	removed := existing(gonePlan.Creates, time.Hour)[0]
	stray := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web-old", Labels: map[string]string{SubsetNameLabel: "a"}}}
	stray.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	p, err := Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: t0, Workloads: append(old, dup, removed), Strays: []client.Object{stray}})
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, d := range p.Deletes {
		deleted = append(deleted, d.Obj.GetName())
	}
	if strings.Join(deleted, ",") != "web-gone-a,web-a-dup,web-old" || len(p.Creates)+len(p.Updates) != 0 {
		t.Errorf("deletes %v, creates %d, updates %d", deleted, len(p.Creates), len(p.Updates))
	}
}

func stuckPod(subsetName string, created time.Time) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: subsetName + "-stuck", CreationTimestamp: metav1.NewTime(created),
		Labels: map[string]string{SubsetNameLabel: subsetName}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
			Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}
}

func readyPod(subsetName, name, rev string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{SubsetNameLabel: subsetName, RevisionLabel: rev}},
		Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
}

// TestAdaptiveMovesStuckReplicas: a subset whose pod is stuck unscheduled beyond
// rescheduleCriticalSeconds keeps only its running pods; the rest go to the next subset, the
// subset is marked unschedulable for unschedulableDuration, then recovers.
func TestAdaptiveMovesStuckReplicas(t *testing.T) {
	a, b := zone("a", nil), zone("b", nil)
	a.MaxReplicas, b.MaxReplicas = n(3), n(5)
	ud := testUD(a, b)
	ud.Spec.Replicas = ptr.To[int32](3)
	ud.Spec.Topology.ScheduleStrategy = appsv1alpha1.UnitedDeploymentScheduleStrategy{Type: appsv1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType,
		Adaptive: &appsv1alpha1.UnitedDeploymentAdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](10), UnschedulableDuration: ptr.To[int32](60)}}
	first, err := Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: t0})
	if err != nil || first.Status.SubsetReplicas["a"] != 3 {
		t.Fatalf("first allocation %v %v", first.Status.SubsetReplicas, err)
	}
	objs := existing(first.Creates, time.Minute)
	pods := map[string][]*corev1.Pod{"a": {readyPod("a", "a-1", "r1"), stuckPod("a", t0.Add(-5*time.Second)), stuckPod("a", t0.Add(-5*time.Second))}}

	// Not stuck yet: nothing moves, a recheck is due when the pods become stuck.
	p, _ := Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: t0, Workloads: objs, Pods: pods})
	if len(p.Updates) != 0 || !p.RecheckAt.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("before the critical time: updates %v, recheck %v", p.Updates, p.RecheckAt)
	}
	// Stuck: subset a keeps its running pod, b takes 2; a is marked.
	now := t0.Add(6 * time.Second)
	p, _ = Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: now, Workloads: objs, Pods: pods})
	if p.Status.SubsetReplicas["a"] != 1 || p.Status.SubsetReplicas["b"] != 2 || len(p.Updates) != 2 {
		t.Fatalf("stuck: %v, updates %v", p.Status.SubsetReplicas, p.Updates)
	}
	c := subsetCond(p.Status, "a")
	if c == nil || c.Status != corev1.ConditionFalse || !c.LastTransitionTime.Time.Equal(now) || !p.RecheckAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("mark %+v, recheck %v", c, p.RecheckAt)
	}
	// Marked, the stuck pods gone: a still gets no new replicas until the mark expires.
	ud.Status = p.Status
	objs = applied(objs, p)
	pods = map[string][]*corev1.Pod{"a": {readyPod("a", "a-1", "r1")}}
	p, _ = Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: now.Add(30 * time.Second), Workloads: objs, Pods: pods})
	if p.Status.SubsetReplicas["a"] != 1 || subsetCond(p.Status, "a").Status != corev1.ConditionFalse {
		t.Fatalf("while marked: %v %+v", p.Status.SubsetReplicas, subsetCond(p.Status, "a"))
	}
	// Expired: a recovers and takes its replicas back (b keeps none beyond what a cannot hold).
	p, _ = Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: now.Add(61 * time.Second), Workloads: objs, Pods: pods})
	if c := subsetCond(p.Status, "a"); c == nil || c.Status != corev1.ConditionTrue || p.Status.SubsetReplicas["a"] != 3 {
		t.Fatalf("after the mark: %v %+v", p.Status.SubsetReplicas, c)
	}
}

func TestStatusCountsAndRevisions(t *testing.T) {
	ud := testUD(zone("a", n(1)), zone("b", nil))
	ud.Spec.Replicas = ptr.To[int32](2)
	first, _ := Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: t0})
	objs := existing(first.Creates, time.Minute)
	for _, o := range objs {
		cs := o.(*appsv1alpha1.CloneSet)
		cs.Status.Replicas, cs.Status.ReadyReplicas = 1, 1
	}
	pods := map[string][]*corev1.Pod{"a": {readyPod("a", "a-1", "r2")}, "b": {readyPod("b", "b-1", "r1")}}
	ud.Status.CurrentRevision = "r1"
	p, _ := Compute(Snapshot{UD: ud, Revision: "r2", Current: "r1", Now: t0, Workloads: objs, Pods: pods})
	st := p.Status
	if st.Replicas != 2 || st.ReadyReplicas != 2 || st.UpdatedReplicas != 1 || st.UpdatedReadyReplicas != 1 || st.CurrentRevision != "r1" ||
		st.UpdateStatus.UpdatedRevision != "r2" {
		t.Fatalf("status %+v", st)
	}
	if c := cond(st, Updated); c == nil || c.Status != corev1.ConditionFalse || c.Message != "updating to revision r2" {
		t.Errorf("Updated %+v", c)
	}
	pods["b"] = []*corev1.Pod{readyPod("b", "b-1", "r2")}
	p, _ = Compute(Snapshot{UD: ud, Revision: "r2", Current: "r1", Now: t0, Workloads: objs, Pods: pods})
	if p.Status.CurrentRevision != "r2" {
		t.Errorf("all pods updated and ready: current revision %s, want r2", p.Status.CurrentRevision)
	}
}

func cond(st appsv1alpha1.UnitedDeploymentStatus, typ appsv1alpha1.UnitedDeploymentConditionType) *appsv1alpha1.UnitedDeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}

func subsetCond(st appsv1alpha1.UnitedDeploymentStatus, name string) *appsv1alpha1.UnitedDeploymentSubsetCondition {
	for _, s := range st.SubsetStatuses {
		if s.Name != name {
			continue
		}
		for i := range s.Conditions {
			if s.Conditions[i].Type == SubsetSchedulable {
				return &s.Conditions[i]
			}
		}
	}
	return nil
}

// applied returns objs with the plan's updates written.
func applied(objs []client.Object, p Plan) []client.Object {
	out := append([]client.Object(nil), objs...)
	for _, u := range p.Updates {
		for i, o := range out {
			if o.GetName() == u.Obj.GetName() {
				out[i] = u.Obj
			}
		}
	}
	return out
}

// TestReserveUnschedulablePods: with reserveUnschedulablePods, stuck pods stay in their subset,
// labelled reserved, while as many stand-ins run in the next subset; once they run and have been
// ready for unschedulableDuration they are released and the stand-ins go.
func TestReserveUnschedulablePods(t *testing.T) {
	ud := testUD(zone("a", nil), zone("b", nil))
	ud.Spec.Replicas = ptr.To[int32](3)
	ud.Spec.Topology.ScheduleStrategy = appsv1alpha1.UnitedDeploymentScheduleStrategy{Type: appsv1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType,
		Adaptive: &appsv1alpha1.UnitedDeploymentAdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](10), UnschedulableDuration: ptr.To[int32](60),
			ReserveUnschedulablePods: true}}
	first, err := Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: t0})
	if err != nil || first.Status.SubsetReplicas["a"] != 3 || first.Status.LabelSelector != "app=web,"+ReservedLabel+"=false" {
		t.Fatalf("first: %v %q %v", first.Status.SubsetReplicas, first.Status.LabelSelector, err)
	}
	objs := existing(first.Creates, time.Minute)
	objs[0].(*appsv1alpha1.CloneSet).Status.Replicas = 3
	running := readyPod("a", "a-1", "r1")
	stuck1, stuck2 := stuckPod("a", t0.Add(-20*time.Second)), stuckPod("a", t0.Add(-20*time.Second))
	stuck1.Name, stuck2.Name = "a-2", "a-3"
	for _, p := range []*corev1.Pod{stuck1, stuck2} {
		p.Labels[RevisionLabel] = "r1"
	}
	p, _ := Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: t0, Workloads: objs, Pods: map[string][]*corev1.Pod{"a": {running, stuck1, stuck2}}})
	labels := map[string]string{}
	for _, l := range p.PodLabels {
		labels[l.Pod.Name] = l.Value
	}
	if labels["a-1"] != "false" || labels["a-2"] != "true" || labels["a-3"] != "true" {
		t.Fatalf("labels %v", labels)
	}
	if p.Status.SubsetReplicas["a"] != 3 || p.Status.SubsetReplicas["b"] != 2 || p.Status.ReservedPods != 2 || p.Status.Replicas != 1 {
		t.Fatalf("reserved: %v reserved %d replicas %d", p.Status.SubsetReplicas, p.Status.ReservedPods, p.Status.Replicas)
	}
	if c := subsetCond(p.Status, "a"); c == nil || c.Status != corev1.ConditionFalse || c.Message != "reserved pods found" {
		t.Fatalf("condition %+v", c)
	}

	// The reserved pods start and are ready: they stay reserved for unschedulableDuration.
	ud.Status = p.Status
	readySince := t0.Add(5 * time.Second)
	started := func(name string) *corev1.Pod {
		pod := readyPod("a", name, "r1")
		pod.Labels[ReservedLabel] = "true"
		pod.Status.Conditions[0].LastTransitionTime = metav1.NewTime(readySince)
		return pod
	}
	running.Labels[ReservedLabel] = "false"
	pods := map[string][]*corev1.Pod{"a": {running, started("a-2"), started("a-3")}}
	p, _ = Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: t0.Add(10 * time.Second), Workloads: objs, Pods: pods})
	if len(p.PodLabels) != 0 || p.Status.ReservedPods != 2 || !p.RecheckAt.Equal(readySince.Add(time.Minute)) {
		t.Fatalf("held: labels %v reserved %d recheck %v", p.PodLabels, p.Status.ReservedPods, p.RecheckAt)
	}
	// Released: the stand-ins go, the subset is schedulable again.
	p, _ = Compute(Snapshot{UD: ud, Revision: "r1", Current: "r1", Now: readySince.Add(61 * time.Second), Workloads: objs, Pods: pods})
	if len(p.PodLabels) != 2 || p.Status.ReservedPods != 0 || p.Status.SubsetReplicas["b"] != 0 || p.Status.SubsetReplicas["a"] != 3 {
		t.Fatalf("released: labels %v reserved %d %v", p.PodLabels, p.Status.ReservedPods, p.Status.SubsetReplicas)
	}
	if c := subsetCond(p.Status, "a"); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("condition %+v", c)
	}
}

// A pod of a subset marked unschedulable that was never decided is reserved at once; a pending
// pod of an older revision is judged from the update's start.
func TestReserveRules(t *testing.T) {
	w := window(&appsv1alpha1.UnitedDeployment{})
	fresh := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "new", Labels: map[string]string{RevisionLabel: "r2"}}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	if r := reserve([]*corev1.Pod{fresh}, true, "r2", t0, w, t0); r.Reserved != 1 || r.Patches[0].Value != "true" {
		t.Errorf("new pod in a marked subset: %+v", r)
	}
	old := stuckPod("a", t0.Add(-time.Hour))
	old.Labels[RevisionLabel] = "r1"
	if r := reserve([]*corev1.Pod{old}, false, "r2", t0.Add(-10*time.Second), w, t0); r.Reserved != 0 || !r.RecheckAt.Equal(t0.Add(20*time.Second)) {
		t.Errorf("old-revision pod, update 10s old: %+v", r)
	}
	if r := reserve([]*corev1.Pod{old}, false, "r2", t0.Add(-31*time.Second), w, t0); r.Reserved != 1 {
		t.Errorf("old-revision pod, update 31s old: %+v", r)
	}
}
