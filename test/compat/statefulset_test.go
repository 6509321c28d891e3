package compat

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
)

var statefulSetGVK = v1beta1.GroupVersion.WithKind("StatefulSet")

// An Advanced StatefulSet as the user applied it (its last-applied-configuration), defaulted by
// Kruise, is the spec OpenKruise v1.9.0 stored and gets OpenKruise's revision names. The fixture's
// StatefulSet had its image patched after the apply (which leaves last-applied as it was): the
// applied template maps to status.currentRevision, and the applied object with the stored images
// is the stored spec, field for field, and maps to status.updateRevision. Through v1alpha1
// (defaulted, then converted to the stored v1beta1) the result is the same but for the PVC
// retention policy, which OpenKruise's v1alpha1 path loses in its conversion back.
func TestDefaultedStatefulSetsAsOpenKruiseStores(t *testing.T) {
	sets, revisions := readWorkloadStatefulSets(t)
	tested := 0
	for i := range sets {
		sts := &sets[i]
		applied, ok := sts.Annotations[lastAppliedAnnotation]
		if !ok {
			continue
		}
		tested++
		t.Run(sts.Name, func(t *testing.T) {
			owned := map[string]*appsv1.ControllerRevision{}
			for j := range revisions {
				ref := metav1.GetControllerOf(&revisions[j])
				if ref != nil && ref.Kind == "StatefulSet" && ref.Name == sts.Name && revisions[j].Namespace == sts.Namespace {
					owned[revisions[j].Name] = &revisions[j]
				}
			}
			name := func(tmpl *corev1.PodTemplateSpec) string {
				return revision.Name(sts.Name, revision.Hash(revision.Input{Template: tmpl}, sts.Status.CollisionCount))
			}
			// storedImages gives each container the image of the stored container of its name.
			storedImages := func(cs []corev1.Container) {
				for k := range cs {
					for _, s := range sts.Spec.Template.Spec.Containers {
						if s.Name == cs[k].Name {
							cs[k].Image = s.Image
						}
					}
				}
			}

			// As applied: the current revision, with exactly the template OpenKruise recorded.
			beta := &v1beta1.StatefulSet{}
			if err := json.Unmarshal([]byte(applied), beta); err != nil {
				t.Fatalf("decode %s: %v", lastAppliedAnnotation, err)
			}
			patched := beta.DeepCopy()
			defaultV1beta1(beta)
			if got := name(&beta.Spec.Template); got != sts.Status.CurrentRevision {
				t.Errorf("applied: revision name %s, want status.currentRevision %s", got, sts.Status.CurrentRevision)
			}
			if rev := owned[sts.Status.CurrentRevision]; rev == nil {
				t.Errorf("no revision %s in the fixture", sts.Status.CurrentRevision)
			} else if want, err := revision.TemplateOf(rev); err != nil {
				t.Error(err)
			} else if !equality.Semantic.DeepEqual(&beta.Spec.Template, want) {
				t.Errorf("defaulted template differs from revision %s (-revision +defaulted):\n%s", rev.Name, diff.Diff(want, &beta.Spec.Template))
			}

			// With the stored images: the stored spec and the update revision.
			storedImages(patched.Spec.Template.Spec.Containers)
			defaultV1beta1(patched)
			if !equality.Semantic.DeepEqual(patched.Spec, sts.Spec) {
				t.Errorf("defaulted spec differs from the stored one (-stored +defaulted):\n%s", diff.Diff(sts.Spec, patched.Spec))
			}
			if got := name(&patched.Spec.Template); got != sts.Status.UpdateRevision {
				t.Errorf("patched: revision name %s, want status.updateRevision %s", got, sts.Status.UpdateRevision)
			}

			// Through v1alpha1.
			alpha := &v1alpha1.StatefulSet{}
			if err := json.Unmarshal([]byte(applied), alpha); err != nil {
				t.Fatalf("decode %s as v1alpha1: %v", lastAppliedAnnotation, err)
			}
			storedImages(alpha.Spec.Template.Spec.Containers)
			defaults.SetDefaultsStatefulSet(alpha)
			defaults.SetDefaultsStatefulSetTemplate(alpha)
			hub := &v1beta1.StatefulSet{}
			if err := alpha.ConvertTo(hub); err != nil {
				t.Fatal(err)
			}
			want := sts.Spec.DeepCopy()
			want.PersistentVolumeClaimRetentionPolicy = nil
			if !equality.Semantic.DeepEqual(hub.Spec, *want) {
				t.Errorf("v1alpha1: defaulted spec differs from the stored one (-stored +defaulted):\n%s", diff.Diff(*want, hub.Spec))
			}
			if got := name(&hub.Spec.Template); got != sts.Status.UpdateRevision {
				t.Errorf("v1alpha1: revision name %s, want status.updateRevision %s", got, sts.Status.UpdateRevision)
			}
		})
	}
	if tested == 0 {
		t.Fatalf("no StatefulSet in the fixture has %s", lastAppliedAnnotation)
	}
}

// Kruise builds every revision OpenKruise v1.9.0 wrote for an Advanced StatefulSet exactly as
// OpenKruise did: name, Data, labels, and the owner's annotations with no claim-template hash (an
// Advanced StatefulSet's revision does not record its claim templates).
func TestStatefulSetRevisionsAsOpenKruiseWritesThem(t *testing.T) {
	sets, revisions := readWorkloadStatefulSets(t)
	owners := map[string]*v1beta1.StatefulSet{}
	for i := range sets {
		owners[sets[i].Namespace+"/"+sets[i].Name] = &sets[i]
	}
	tested := 0
	for _, want := range revisions {
		ref := metav1.GetControllerOf(&want)
		if ref == nil || ref.Kind != "StatefulSet" {
			continue
		}
		tested++
		t.Run(want.Name, func(t *testing.T) {
			owner := owners[want.Namespace+"/"+ref.Name]
			if owner == nil {
				t.Fatalf("no StatefulSet %s in the fixture", ref.Name)
			}
			tpl, err := revision.TemplateOf(&want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := revision.New(owner, statefulSetGVK, revision.Input{Template: tpl}, want.Revision, owner.Status.CollisionCount)
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != want.Name {
				t.Errorf("name = %s, want %s", got.Name, want.Name)
			}
			if wantData := canonicalJSON(t, want.Data.Raw); string(got.Data.Raw) != wantData {
				t.Errorf("data =\n%s\nwant\n%s", got.Data.Raw, wantData)
			}
			if !equality.Semantic.DeepEqual(got.Labels, want.Labels) {
				t.Errorf("labels = %v, want %v", got.Labels, want.Labels)
			}
			if !equality.Semantic.DeepEqual(got.Annotations, want.Annotations) {
				t.Errorf("annotations = %v, want %v", got.Annotations, want.Annotations)
			}
			if _, ok := want.Annotations[revision.ClaimTemplatesHashAnnotation]; ok {
				t.Errorf("OpenKruise's revision records claim templates (%s)", revision.ClaimTemplatesHashAnnotation)
			}
		})
	}
	if tested == 0 {
		t.Fatal("no StatefulSet revision in the fixture")
	}
}

// defaultV1beta1 is the v1beta1 StatefulSet webhook with OpenKruise's default gates.
func defaultV1beta1(obj *v1beta1.StatefulSet) {
	defaults.SetDefaultsStatefulSetV1beta1(obj)
	defaults.SetDefaultsStatefulSetTemplateV1beta1(obj)
}

// readWorkloadStatefulSets reads the Advanced StatefulSets and the revisions of the fixture's
// workloads/ folder.
func readWorkloadStatefulSets(t *testing.T) ([]v1beta1.StatefulSet, []appsv1.ControllerRevision) {
	t.Helper()
	var sets v1beta1.StatefulSetList
	revs := readWorkloadDump(t, &sets)
	if len(sets.Items) == 0 {
		t.Fatal("takeover workloads fixture: no StatefulSets")
	}
	return sets.Items, revs
}
