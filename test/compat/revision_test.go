package compat

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/test/harness"
)

var cloneSetGVK = v1alpha1.GroupVersion.WithKind("CloneSet")

// Kruise names, labels and fills every revision OpenKruise v1.9.0 wrote exactly as OpenKruise did:
// the template read back from the fixture's revision builds the same name and the same Data.
func TestRevisionsAsOpenKruiseWritesThem(t *testing.T) {
	tk := mustReadTakeover(t)
	owners := map[string]*v1alpha1.CloneSet{}
	for i := range tk.CloneSets {
		owners[tk.CloneSets[i].Name] = &tk.CloneSets[i]
	}
	for _, want := range tk.Revisions {
		owner := owners[metav1.GetControllerOf(&want).Name]
		if owner == nil {
			continue // an Advanced StatefulSet's: TestStatefulSetRevisionsAsOpenKruiseWritesThem
		}
		t.Run(want.Name, func(t *testing.T) {
			tpl, err := revision.TemplateOf(&want)
			if err != nil {
				t.Fatal(err)
			}
			in := revision.Input{Template: tpl, VolumeClaimTemplates: owner.Spec.VolumeClaimTemplates, RecordClaimTemplates: true}
			got, err := revision.New(owner, cloneSetGVK, in, want.Revision, owner.Status.CollisionCount)
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != want.Name {
				t.Errorf("name = %s, want %s", got.Name, want.Name)
			}
			// The fixture's Data went through YAML; its JSON has OpenKruise's key order.
			if wantData := canonicalJSON(t, want.Data.Raw); string(got.Data.Raw) != wantData {
				t.Errorf("data =\n%s\nwant\n%s", got.Data.Raw, wantData)
			}
			for k, v := range want.Labels {
				if got.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, got.Labels[k], v)
				}
			}
			if len(got.Labels) != len(want.Labels) {
				t.Errorf("labels = %v, want %v", got.Labels, want.Labels)
			}
			k := revision.ClaimTemplatesHashAnnotation
			if got.Annotations[k] != want.Annotations[k] {
				t.Errorf("annotation %s = %q, want %q", k, got.Annotations[k], want.Annotations[k])
			}
		})
	}
}

// Each CloneSet as stored (its template defaulted by OpenKruise's webhook) maps to the update
// revision OpenKruise recorded.
func TestCloneSetUpdateRevisionNames(t *testing.T) {
	tk := mustReadTakeover(t)
	for i := range tk.CloneSets {
		cs := &tk.CloneSets[i]
		t.Run(cs.Name, func(t *testing.T) {
			in := revision.Input{Template: &cs.Spec.Template, VolumeClaimTemplates: cs.Spec.VolumeClaimTemplates, RecordClaimTemplates: true}
			hash := revision.Hash(in, cs.Status.CollisionCount)
			if got := revision.Name(cs.Name, hash); got != cs.Status.UpdateRevision {
				t.Errorf("revision name = %s, want %s", got, cs.Status.UpdateRevision)
			}
			if got := revision.ShortHash(cs.Status.UpdateRevision); got != hash {
				t.Errorf("ShortHash(%s) = %s, want %s", cs.Status.UpdateRevision, got, hash)
			}
		})
	}
}

func mustReadTakeover(t *testing.T) *Takeover {
	t.Helper()
	tk, err := ReadTakeover(harness.RepoRoot())
	if err != nil {
		t.Fatalf("takeover fixture (set KRUISE_COMPAT_DIR to the openkruise-v1.9.0 folder): %v", err)
	}
	if len(tk.CloneSets) == 0 || len(tk.Revisions) == 0 {
		t.Fatal("takeover fixture: no CloneSets or revisions")
	}
	return tk
}

// canonicalJSON re-encodes raw with sorted keys and no spacing (HTML characters escaped as Go's
// encoder escapes them).
func canonicalJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
