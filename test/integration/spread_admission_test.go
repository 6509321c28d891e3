package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

// A user creating UnitedDeployments, WorkloadSpreads and PersistentPodStates through a serving
// kruise-manager: an invalid one is refused naming the offending field (a subset template the API
// server would refuse as a pod included), a valid one is stored with OpenKruise's defaults only;
// a UnitedDeployment's selector cannot change, and a workload is spread by one WorkloadSpread only.
func TestSpreadAdmission(t *testing.T) {
	ctx := context.Background()
	admin := harness.KruiseClient(t, cfg)
	installKruise(t, admin)
	startManager(t, managerOptions(t, "kruise-manager-spread"))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "spread-"}}
	if err := admin.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}

	ud := func(name string) *appsv1alpha1.UnitedDeployment {
		labels := map[string]string{"app": "web"}
		zone := func(z string) corev1.NodeSelectorTerm {
			return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{z}}}}
		}
		return &appsv1alpha1.UnitedDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name},
			Spec: appsv1alpha1.UnitedDeploymentSpec{Replicas: ptr.To[int32](4), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: appsv1alpha1.UnitedDeploymentSubsetTemplate{StatefulSetTemplate: &appsv1alpha1.UnitedDeploymentStatefulSetTemplate{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:v1"}}}}}}},
				Topology: appsv1alpha1.UnitedDeploymentTopology{Subsets: []appsv1alpha1.UnitedDeploymentSubset{
					{Name: "zone-a", NodeSelectorTerm: zone("a"), Replicas: ptr.To(intstr.FromInt32(1))},
					{Name: "zone-b", NodeSelectorTerm: zone("b")}}}}}
	}
	tooMany := ud("too-many")
	tooMany.Spec.Topology.Subsets[0].Replicas = ptr.To(intstr.FromString("150%"))
	expectInvalid(t, "a subset above 100%", admin.Create(ctx, tooMany), "spec.topology.subsets[0].replicas")
	unknown := ud("unknown-partition")
	unknown.Spec.UpdateStrategy.ManualUpdate = &appsv1alpha1.UnitedDeploymentManualUpdate{Partitions: map[string]int32{"zone-z": 1}}
	expectInvalid(t, "a partition of no subset", admin.Create(ctx, unknown), "spec.updateStrategy.manualUpdate.partitions[zone-z]")
	badPort := ud("bad-port")
	badPort.Spec.Template.StatefulSetTemplate.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 70000}}
	expectInvalid(t, "a template the API server refuses as a pod", admin.Create(ctx, badPort),
		"spec.template.statefulSetTemplate.spec.template.spec.containers[0].ports[0].containerPort")

	good := ud("web")
	if err := admin.Create(ctx, good); err != nil {
		t.Fatalf("a valid UnitedDeployment: %v", err)
	}
	stored := &appsv1alpha1.UnitedDeployment{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(good), stored); err != nil {
		t.Fatal(err)
	}
	if mu := stored.Spec.UpdateStrategy.ManualUpdate; stored.Spec.UpdateStrategy.Type != appsv1alpha1.ManualUnitedDeploymentUpdateStrategyType ||
		mu == nil || stored.Spec.Topology.ScheduleStrategy.Type != "" {
		t.Errorf("stored with updateStrategy %+v, scheduleStrategy %+v; want Manual with an empty manualUpdate and no schedule type, as OpenKruise stores it",
			stored.Spec.UpdateStrategy, stored.Spec.Topology.ScheduleStrategy)
	}
	stored.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}
	expectInvalid(t, "a changed selector", admin.Update(ctx, stored), "spec.selector")

	ws := func(name string) *appsv1alpha1.WorkloadSpread {
		return &appsv1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name},
			Spec: appsv1alpha1.WorkloadSpreadSpec{
				TargetReference: &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web"},
				Subsets: []appsv1alpha1.WorkloadSpreadSubset{
					{Name: "zone-a", MaxReplicas: ptr.To(intstr.FromString("30%"))}, {Name: "zone-b"}}}}
	}
	short := ws("short")
	short.Spec.Subsets[1].MaxReplicas = ptr.To(intstr.FromString("50%"))
	expectInvalid(t, "percentages short of 100%", admin.Create(ctx, short), "spec.subsets[0].maxReplicas")
	daemon := ws("daemon")
	daemon.Spec.TargetReference.Kind = "DaemonSet"
	expectInvalid(t, "a kind no whitelist allows", admin.Create(ctx, daemon), "spec.targetRef.kind")
	spread := ws("web")
	if err := admin.Create(ctx, spread); err != nil {
		t.Fatalf("a valid WorkloadSpread: %v", err)
	}
	storedWS := &appsv1alpha1.WorkloadSpread{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(spread), storedWS); err != nil {
		t.Fatal(err)
	}
	if storedWS.Spec.ScheduleStrategy.Type != "" {
		t.Errorf("stored with scheduleStrategy type %q, want none, as OpenKruise stores it", storedWS.Spec.ScheduleStrategy.Type)
	}
	// The webhook reads the other WorkloadSpreads from the manager's cache, which sees the new one
	// shortly after it is stored: ask (dry run) until it does.
	var last error
	harness.Eventually(t, 30*time.Second, "a second WorkloadSpread of CloneSet web refused", func() (bool, string) {
		last = admin.Create(ctx, ws("web-again"), client.DryRunAll)
		return apierrors.IsInvalid(last), fmt.Sprintf("dry-run create answered %v", last)
	})
	expectInvalid(t, "a second WorkloadSpread of the same workload", last, "spec.targetRef")

	pps := &appsv1alpha1.PersistentPodState{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns.Name},
		Spec: appsv1alpha1.PersistentPodStateSpec{
			TargetReference:            appsv1alpha1.PersistentPodStateTargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "db"},
			RequiredPersistentTopology: &appsv1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{"topology.kubernetes.io/zone"}}}}
	expectInvalid(t, "a PersistentPodState of a Deployment", admin.Create(ctx, pps), "spec.targetRef.kind")
	pps.Spec.TargetReference.Kind = "StatefulSet"
	if err := admin.Create(ctx, pps); err != nil {
		t.Fatalf("a valid PersistentPodState: %v", err)
	}
}
