package compat

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/yaml"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/test/harness"
)

const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// A CloneSet as the user applied it (its last-applied-configuration), defaulted by Kruise, gets a
// revision name OpenKruise v1.9.0 gave it and exactly the template OpenKruise recorded in that
// revision. The user may have patched the image afterwards (which leaves last-applied as it was),
// so the revision may be an older one than status.updateRevision.
func TestDefaultedCloneSetsGetOpenKruiseRevisions(t *testing.T) {
	tk := mustReadTakeover(t)
	cloneSets, revisions := tk.CloneSets, tk.Revisions
	// workloads/ holds one more user-applied CloneSet (sc-target); the other CloneSets there were
	// written by the UnitedDeployment controller and carry no last-applied configuration.
	wcs, wrevs := readWorkloadCloneSets(t)
	cloneSets, revisions = append(slices.Clone(cloneSets), wcs...), append(slices.Clone(revisions), wrevs...)

	tested := 0
	for i := range cloneSets {
		cs := &cloneSets[i]
		applied, ok := cs.Annotations[lastAppliedAnnotation]
		if !ok {
			continue
		}
		tested++
		t.Run(cs.Name, func(t *testing.T) {
			obj := &v1alpha1.CloneSet{}
			if err := json.Unmarshal([]byte(applied), obj); err != nil {
				t.Fatalf("decode %s: %v", lastAppliedAnnotation, err)
			}
			defaults.SetDefaultsCloneSet(obj)
			defaults.SetDefaultsCloneSetTemplate(obj)

			name := revision.Name(cs.Name, revision.Hash(revision.Input{Template: &obj.Spec.Template}, cs.Status.CollisionCount))
			owned := ownedRevisions(revisions, cs)
			var rev *appsv1.ControllerRevision
			var names []string
			for j := range owned {
				names = append(names, owned[j].Name)
				if owned[j].Name == name {
					rev = owned[j]
				}
			}
			if rev == nil {
				t.Errorf("revision name %s is none of OpenKruise's %v", name, names)
				if stored, err := yaml.Marshal(cs.Spec.Template); err == nil {
					t.Logf("template OpenKruise stored (it may hold a later image):\n%s", stored)
				}
				t.Logf("defaulted template vs stored (-stored +defaulted):\n%s", diff.Diff(cs.Spec.Template, obj.Spec.Template))
				return
			}
			want, err := revision.TemplateOf(rev)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(&obj.Spec.Template, want) {
				t.Errorf("defaulted template differs from revision %s (-revision +defaulted):\n%s",
					rev.Name, diff.Diff(want, &obj.Spec.Template))
			}
			// The claim templates are defaulted as OpenKruise stored them (status.phase Pending, no
			// spec.volumeMode).
			if !equality.Semantic.DeepEqual(obj.Spec.VolumeClaimTemplates, cs.Spec.VolumeClaimTemplates) {
				t.Errorf("defaulted volumeClaimTemplates differ from the stored ones (-stored +defaulted):\n%s",
					diff.Diff(cs.Spec.VolumeClaimTemplates, obj.Spec.VolumeClaimTemplates))
			}
		})
	}
	if tested == 0 {
		t.Fatalf("no CloneSet in the fixture has %s", lastAppliedAnnotation)
	}
}

// ownedRevisions returns the revisions whose controller is the CloneSet cs.
func ownedRevisions(revs []appsv1.ControllerRevision, cs *v1alpha1.CloneSet) []*appsv1.ControllerRevision {
	var out []*appsv1.ControllerRevision
	for i := range revs {
		ref := metav1.GetControllerOf(&revs[i])
		if ref != nil && ref.Kind == "CloneSet" && ref.Name == cs.Name && revs[i].Namespace == cs.Namespace {
			out = append(out, &revs[i])
		}
	}
	return out
}

// readWorkloadCloneSets reads the CloneSets and revisions of the fixture's workloads/ folder.
func readWorkloadCloneSets(t *testing.T) ([]v1alpha1.CloneSet, []appsv1.ControllerRevision) {
	t.Helper()
	var cs v1alpha1.CloneSetList
	revs := readWorkloadDump(t, &cs)
	return cs.Items, revs
}

// readWorkloadDump decodes the fixture's workloads/ dump of list's kind into list and returns the
// revisions dumped with it.
func readWorkloadDump(t *testing.T, list any) []appsv1.ControllerRevision {
	t.Helper()
	part := &Takeover{}
	if err := readDump(filepath.Join(OracleDir(harness.RepoRoot()), "takeover", "workloads"), list, part); err != nil {
		t.Fatalf("takeover workloads fixture: %v", err)
	}
	return part.Revisions
}
