package cli

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func TestSubsetsTables(t *testing.T) {
	ud := &appsv1alpha1.UnitedDeployment{
		Spec: appsv1alpha1.UnitedDeploymentSpec{Topology: appsv1alpha1.UnitedDeploymentTopology{Subsets: []appsv1alpha1.UnitedDeploymentSubset{{Name: "a"}, {Name: "b"}}}},
		Status: appsv1alpha1.UnitedDeploymentStatus{SubsetReplicas: map[string]int32{"a": 3, "b": 2},
			SubsetStatuses: []appsv1alpha1.UnitedDeploymentSubsetStatus{
				{Name: "b", Replicas: 2, ReadyReplicas: 2},
				{Name: "a", Replicas: 3, ReadyReplicas: 1, ReservedPods: 2, Partition: 1, Conditions: []appsv1alpha1.UnitedDeploymentSubsetCondition{
					{Type: "Schedulable", Status: corev1.ConditionFalse, Message: "reserved pods found"}}}}}}
	var out bytes.Buffer
	if err := writeUnitedDeploymentSubsets(&out, ud); err != nil {
		t.Fatal(err)
	}
	want := []string{"SUBSET  ALLOCATED  REPLICAS  READY  PARTITION  RESERVED  SCHEDULABLE",
		"a       3          3         1      1          2         no: reserved pods found",
		"b       2          2         2      0          0         yes"}
	if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("UnitedDeployment table:\n%s\nwant\n%s", out.String(), strings.Join(want, "\n"))
	}

	ws := &appsv1alpha1.WorkloadSpread{Spec: appsv1alpha1.WorkloadSpreadSpec{Subsets: []appsv1alpha1.WorkloadSpreadSubset{
		{Name: "ecs", MaxReplicas: ptr.To(intstr.FromInt32(2))}, {Name: "eci"}}},
		Status: appsv1alpha1.WorkloadSpreadStatus{SubsetStatuses: []appsv1alpha1.WorkloadSpreadSubsetStatus{
			{Name: "ecs", Replicas: 2, MissingReplicas: 0, CreatingPods: map[string]metav1.Time{"p1": {}}},
			{Name: "eci", Replicas: 3, MissingReplicas: -1}}}}
	out.Reset()
	if err := writeWorkloadSpreadSubsets(&out, ws); err != nil {
		t.Fatal(err)
	}
	want = []string{"SUBSET  MAX  REPLICAS  MISSING  CREATING  DELETING  SCHEDULABLE",
		"ecs     2    2         0        1         0         yes",
		"eci     -    3         -        0         0         yes"}
	if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("WorkloadSpread table:\n%s\nwant\n%s", out.String(), strings.Join(want, "\n"))
	}
	if _, _, ok := splitKindName([]string{"web"}); ok {
		t.Error("a bare name: split")
	}
}
