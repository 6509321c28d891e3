package main

import (
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/subset"
)

// udSplit gives subset a its percentage rounded half up, as Kruise's allocator parses it.
func TestUDSplit(t *testing.T) {
	for total, wantA := range map[int32]int32{2: 1, 3: 1, 4: 2, 5: 2, 6: 2, 7: 3, 8: 3} {
		got := udSplit(total)
		if got["a"] != wantA || got["a"]+got["b"] != total {
			t.Errorf("udSplit(%d) = %v, want a %d", total, got, wantA)
		}
		parsed, err := subset.ParseReplicas(total, intstr.FromString("40%"))
		if err != nil || parsed != got["a"] {
			t.Errorf("ParseReplicas(%d, 40%%) = %d, %v; udSplit says %d", total, parsed, err, got["a"])
		}
	}
}

// The driver's patches of the UnitedDeployment reach its CloneSet template and its subsets.
func TestUnitedDeploymentPatches(t *testing.T) {
	w, _ := workloadNamed(udName)
	var img struct {
		Spec struct {
			Template appsv1alpha1.UnitedDeploymentSubsetTemplate `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(imagePatch(w, 3)), &img); err != nil {
		t.Fatal(err)
	}
	if ct := img.Spec.Template.CloneSetTemplate; ct == nil || ct.Spec.Template.Spec.Containers[0].Image != "registry.example/app:v3" {
		t.Fatalf("image patch %s", imagePatch(w, 3))
	}
	var part struct {
		Spec struct {
			UpdateStrategy appsv1alpha1.UnitedDeploymentUpdateStrategy `json:"updateStrategy"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(partitionPatch(w, 2)), &part); err != nil {
		t.Fatal(err)
	}
	if p := part.Spec.UpdateStrategy.ManualUpdate.Partitions; p["a"] != 2 || p["b"] != 2 {
		t.Fatalf("partition patch %s", partitionPatch(w, 2))
	}
	if pausePatch(w, true) != "" {
		t.Fatal("a UnitedDeployment has no pause")
	}
}

// fresh keeps an object's name, labels and spec, and nothing the API server gave it.
func TestFresh(t *testing.T) {
	for _, w := range world {
		obj := newWorkload(w)
		obj.SetUID("uid")
		obj.SetResourceVersion("7")
		obj.SetLabels(map[string]string{"x": "y"})
		again := fresh(obj)
		if again == nil || again.GetUID() != "" || again.GetResourceVersion() != "" || again.GetName() != w.Name || again.GetLabels()["x"] != "y" {
			t.Fatalf("fresh %s: %+v", w.Name, again)
		}
	}
	cs := fresh(&appsv1alpha1.CloneSet{Spec: appsv1alpha1.CloneSetSpec{Replicas: ptr.To[int32](3)}}).(*appsv1alpha1.CloneSet)
	if *cs.Spec.Replicas != 3 {
		t.Fatal("spec not kept")
	}
}

// max is the most replicas asked within the window.
func TestReplicaHistoryMax(t *testing.T) {
	h := newReplicaHistory(time.Now().Add(-time.Minute))
	h.record("api", 8, time.Now().Add(-40*time.Second))
	h.record("api", 3, time.Now().Add(-10*time.Second))
	if m, _ := h.max("api", 30*time.Second); m != 8 {
		t.Errorf("max over 30 s = %d, want 8 (in force at the window's start)", m)
	}
	h.record("api", 2, time.Now())
	if m, _ := h.max("api", 5*time.Second); m != 3 {
		t.Errorf("max over 5 s = %d, want 3", m)
	}
}
