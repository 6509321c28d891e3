package main

import (
	"context"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The kinds that place pods over the nodes: the kwok nodes are split into two zones by zoneLabel
// (even nodes "a", odd ones "b"). The UnitedDeployment ud runs a CloneSet in each zone, udShareA
// of its replicas in zone a; the WorkloadSpread api spreads CloneSet api's pods, at most
// spreadMaxA in zone a and the rest in zone b; the PersistentPodState db keeps each pod of the
// StatefulSet db in the zone it ran in (and preferably on its node) when it is created again.
const (
	zoneLabel = "soak.kruise.io/zone"
	udName    = "ud"
	// udSharePercent is the percentage of ud's replicas its subset a holds.
	udSharePercent = 40
	spreadName     = "api"
	spreadMaxA     = 3
	ppsName        = "db"
	// subsetLabel is the label a UnitedDeployment gives its subset's pods.
	subsetLabel = "apps.kruise.io/subset-name"
	// udRevisionLabel is the label carrying the UnitedDeployment's revision on its pods.
	udRevisionLabel = "apps.kruise.io/controller-revision-hash"
)

// zones are the zones' names, which are also the names of the UnitedDeployment's and the
// WorkloadSpread's subsets.
var zones = []string{"a", "b"}

// zoneOfNode is the zone of the i-th kwok node (by name order).
func zoneOfNode(i int) string { return zones[i%len(zones)] }

// labelZones labels each kwok node with its zone.
func labelZones(ctx context.Context, cs kubernetes.Interface, nodes []string) error {
	for i, n := range nodes {
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, zoneLabel, zoneOfNode(i))
		if _, err := cs.CoreV1().Nodes().Patch(ctx, n, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("label node %s with its zone: %w", n, err)
		}
	}
	return nil
}

func zoneTerm(zone string) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: zoneLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}}}
}

// udSplit is how many of total replicas the UnitedDeployment's subsets a and b hold: a its
// percentage rounded half up, b the rest.
func udSplit(total int32) map[string]int32 {
	a := int32(math.Floor(float64(total)*udSharePercent/100 + 0.5))
	return map[string]int32{"a": a, "b": total - a}
}

func newUnitedDeployment(w workload, tmpl corev1.PodTemplateSpec, maxUnavailable *intstr.IntOrString) *appsv1alpha1.UnitedDeployment {
	sel := &metav1.LabelSelector{MatchLabels: labelsOf(w.Name)}
	return &appsv1alpha1.UnitedDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.Name}, Spec: appsv1alpha1.UnitedDeploymentSpec{
		Replicas: ptr.To(initialReplicas(w)), Selector: sel,
		Template: appsv1alpha1.UnitedDeploymentSubsetTemplate{CloneSetTemplate: &appsv1alpha1.UnitedDeploymentCloneSetTemplate{
			ObjectMeta: metav1.ObjectMeta{Labels: labelsOf(w.Name)},
			Spec: appsv1alpha1.CloneSetSpec{Selector: sel, Template: tmpl, UpdateStrategy: appsv1alpha1.CloneSetUpdateStrategy{
				Type: appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, MaxUnavailable: maxUnavailable}}}},
		Topology: appsv1alpha1.UnitedDeploymentTopology{Subsets: []appsv1alpha1.UnitedDeploymentSubset{
			{Name: "a", NodeSelectorTerm: zoneTerm("a"), Replicas: ptr.To(intstr.FromString(fmt.Sprintf("%d%%", udSharePercent)))},
			{Name: "b", NodeSelectorTerm: zoneTerm("b")}}},
		UpdateStrategy: appsv1alpha1.UnitedDeploymentUpdateStrategy{Type: appsv1alpha1.ManualUnitedDeploymentUpdateStrategyType,
			ManualUpdate: &appsv1alpha1.UnitedDeploymentManualUpdate{Partitions: map[string]int32{}}},
	}}
}

// newSpread spreads CloneSet api over the zones, at most spreadMaxA pods in zone a.
func newSpread() *appsv1alpha1.WorkloadSpread {
	a, b := zoneTerm("a"), zoneTerm("b")
	return &appsv1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: spreadName}, Spec: appsv1alpha1.WorkloadSpreadSpec{
		TargetReference: &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "CloneSet", Name: "api"},
		Subsets: []appsv1alpha1.WorkloadSpreadSubset{
			{Name: "a", RequiredNodeSelectorTerm: &a, MaxReplicas: ptr.To(intstr.FromInt32(spreadMaxA))},
			{Name: "b", RequiredNodeSelectorTerm: &b}}}}
}

// newPersistentPodState keeps StatefulSet db's pods in their zone, preferably on their node.
func newPersistentPodState() *appsv1alpha1.PersistentPodState {
	return &appsv1alpha1.PersistentPodState{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ppsName}, Spec: appsv1alpha1.PersistentPodStateSpec{
		TargetReference:            appsv1alpha1.PersistentPodStateTargetReference{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Name: "db"},
		RequiredPersistentTopology: &appsv1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{zoneLabel}},
		PreferredPersistentTopology: []appsv1alpha1.PersistentPodStatePreferredTopologyTerm{
			{Weight: 100, Preference: appsv1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{corev1.LabelHostname}}}}}}
}

// udPartitionPatch sets the partitions of the UnitedDeployment's subsets.
func udPartitionPatch(a, b int) string {
	return fmt.Sprintf(`{"spec":{"updateStrategy":{"manualUpdate":{"partitions":{"a":%d,"b":%d}}}}}`, a, b)
}

// fresh is obj as the driver creates it again: its name, labels, annotations and spec.
func fresh(obj client.Object) client.Object {
	meta := metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: obj.GetName(), Labels: obj.GetLabels(), Annotations: obj.GetAnnotations()}
	switch o := obj.(type) {
	case *appsv1alpha1.CloneSet:
		return &appsv1alpha1.CloneSet{ObjectMeta: meta, Spec: o.Spec}
	case *appsv1alpha1.UnitedDeployment:
		return &appsv1alpha1.UnitedDeployment{ObjectMeta: meta, Spec: o.Spec}
	case *appsv1beta1.StatefulSet:
		return &appsv1beta1.StatefulSet{ObjectMeta: meta, Spec: o.Spec}
	case *appsv1beta1.DaemonSet:
		return &appsv1beta1.DaemonSet{ObjectMeta: meta, Spec: o.Spec}
	}
	return nil
}
