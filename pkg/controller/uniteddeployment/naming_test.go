package uniteddeployment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/subset"
	"github.com/kruise-ng/kruise/test/compat"
)

func TestSubsetWorkloadPrefix(t *testing.T) {
	long := strings.Repeat("x", 250)
	for _, tc := range []struct{ ud, subset, want string }{
		{"ud", "zone-a", "ud-zone-a-"},
		{"web", "Zone_A", "web-"}, // not a valid name prefix: fall back to "<ud>-"
		{"web", long, "web-"},
	} {
		if got := SubsetWorkloadPrefix(tc.ud, tc.subset); got != tc.want {
			t.Errorf("SubsetWorkloadPrefix(%q, %q) = %q, want %q", tc.ud, tc.subset, got, tc.want)
		}
	}
}

// TestTakeoverFixture checks naming and allocation against the CloneSets OpenKruise v1.9.0 made
// for the UnitedDeployment of the takeover fixture.
func TestTakeoverFixture(t *testing.T) {
	dir := filepath.Join(compat.OracleDir(filepath.Join("..", "..", "..")), "takeover", "workloads")
	var uds appsv1alpha1.UnitedDeploymentList
	var sets appsv1alpha1.CloneSetList
	readList(t, filepath.Join(dir, "uniteddeployments.apps.kruise.io.yaml"), &uds)
	readList(t, filepath.Join(dir, "clonesets.apps.kruise.io.yaml"), &sets)
	if len(uds.Items) != 1 {
		t.Fatalf("want one UnitedDeployment in the fixture, got %d", len(uds.Items))
	}
	ud := &uds.Items[0]

	current := map[string]SubsetState{}
	for _, cs := range sets.Items {
		owner := cs.OwnerReferences
		if len(owner) == 0 || owner[0].Kind != "UnitedDeployment" || owner[0].Name != ud.Name {
			continue
		}
		subsetName := cs.Labels[SubsetNameLabel]
		if want := SubsetWorkloadPrefix(ud.Name, subsetName); cs.GenerateName != want || !strings.HasPrefix(cs.Name, want) {
			t.Errorf("CloneSet %s: generateName %q, want %q", cs.Name, cs.GenerateName, want)
		}
		if cs.Spec.Selector.MatchLabels[SubsetNameLabel] != subsetName || cs.Spec.Template.Labels[SubsetNameLabel] != subsetName {
			t.Errorf("CloneSet %s: selector/template lack %s=%s", cs.Name, SubsetNameLabel, subsetName)
		}
		if _, ok := cs.Annotations[SubsetPatchAnnotation]; !ok {
			t.Errorf("CloneSet %s: no %s annotation", cs.Name, SubsetPatchAnnotation)
		}
		checkPlacement(t, ud, subsetName, &cs)
		current[subsetName] = SubsetState{Replicas: *cs.Spec.Replicas}
	}
	if len(current) != len(ud.Spec.Topology.Subsets) {
		t.Fatalf("found CloneSets for %v, want one per subset", current)
	}
	got, err := Allocate(&ud.Spec, current)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range ud.Status.SubsetReplicas {
		if got[name] != want || current[name].Replicas != want {
			t.Errorf("subset %s: allocated %d, OpenKruise allocated %d (CloneSet has %d)", name, got[name], want, current[name].Replicas)
		}
	}
}

// checkPlacement checks that the subset's node terms land on the pod template as OpenKruise put
// them on the CloneSet.
func checkPlacement(t *testing.T, ud *appsv1alpha1.UnitedDeployment, subsetName string, cs *appsv1alpha1.CloneSet) {
	t.Helper()
	for i := range ud.Spec.Topology.Subsets {
		s := &ud.Spec.Topology.Subsets[i]
		if s.Name != subsetName {
			continue
		}
		got, err := subset.ApplyToTemplate(&ud.Spec.Template.CloneSetTemplate.Spec.Template, s)
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(got.Spec.Affinity, cs.Spec.Template.Spec.Affinity) {
			t.Errorf("subset %s: affinity %s", subsetName, diff.Diff(cs.Spec.Template.Spec.Affinity, got.Spec.Affinity))
		}
		return
	}
	t.Errorf("CloneSet %s names unknown subset %q", cs.Name, subsetName)
}

func readList(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the OpenKruise oracle (set KRUISE_COMPAT_DIR): %v", err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
