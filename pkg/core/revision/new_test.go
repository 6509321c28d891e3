package revision

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	sigsjson "sigs.k8s.io/json"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name      string
		in        Input
		collision *int32
		wantVCT   bool
	}{
		{name: "template only", in: Input{Template: baseTemplate()}},
		{name: "with claim templates", in: Input{Template: baseTemplate(), VolumeClaimTemplates: claimTemplates(), RecordClaimTemplates: true}, wantVCT: true},
		{name: "with collision count", in: Input{Template: baseTemplate()}, collision: ptr.To[int32](4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustNew(t, tt.in, 7, tt.collision)
			hash := Hash(tt.in, tt.collision)
			if r.Name != "web-"+hash || r.Namespace != "prod" || r.Revision != 7 {
				t.Errorf("name/namespace/revision = %s/%s/%d, want prod/web-%s/7", r.Namespace, r.Name, r.Revision, hash)
			}
			wantLabels := map[string]string{"app": "web", "tier": "front", HashLabel: hash}
			if !reflect.DeepEqual(r.Labels, wantLabels) {
				t.Errorf("labels = %v, want %v", r.Labels, wantLabels)
			}
			ref := metav1.GetControllerOf(r)
			if ref == nil || ref.UID != "0b6f-uid" || ref.Kind != "CloneSet" ||
				ref.APIVersion != "apps.kruise.io/v1alpha1" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
				t.Errorf("controller ref = %+v", ref)
			}
			var data struct {
				Spec map[string]json.RawMessage `json:"spec"`
			}
			if err := json.Unmarshal(r.Data.Raw, &data); err != nil {
				t.Fatalf("data is not a JSON object: %v", err)
			}
			var tpl map[string]any
			if err := json.Unmarshal(data.Spec["template"], &tpl); err != nil || tpl["$patch"] != "replace" {
				t.Errorf(`spec.template = %s, want an object with "$patch":"replace" (%v)`, data.Spec["template"], err)
			}
			if len(data.Spec) != 1 {
				t.Errorf("spec keys = %v, want only template", keys(data.Spec))
			}
			if meta, _ := tpl["metadata"].(map[string]any); meta == nil || meta["creationTimestamp"] != nil {
				t.Errorf("template metadata = %v, want creationTimestamp null as OpenKruise writes it", tpl["metadata"])
			} else if _, has := meta["creationTimestamp"]; !has {
				t.Errorf("template metadata = %v, want creationTimestamp null as OpenKruise writes it", meta)
			}
			if _, has := r.Annotations[ClaimTemplatesHashAnnotation]; has != tt.wantVCT {
				t.Errorf("annotations = %v, want the claim-template hash: %v", r.Annotations, tt.wantVCT)
			}
		})
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestNewRejectsMissingTemplate(t *testing.T) {
	if r, err := New(testOwner(), cloneSetGVK, Input{VolumeClaimTemplates: claimTemplates()}, 1, nil); err == nil {
		t.Fatalf("New without template = %v, want an error", r.Name)
	}
}

func TestNewSharesNoMemory(t *testing.T) {
	in := Input{Template: baseTemplate()}
	r := mustNew(t, in, 1, nil)
	r.Labels["app"] = "changed"
	if in.Template.Labels["app"] != "web" || in.Template.Labels[HashLabel] != "" {
		t.Errorf("template labels changed through the revision: %v", in.Template.Labels)
	}
}

func TestName(t *testing.T) {
	long := strings.Repeat("a", 240) + "." + strings.Repeat("b", 20)
	tests := []struct {
		owner, hash, want string
	}{
		{owner: "web", hash: "5d8f9c", want: "web-5d8f9c"},
		// Kubernetes' rule: the owner part is cut to 223 bytes.
		{owner: strings.Repeat("x", 253), hash: "5d8f9c", want: strings.Repeat("x", 223) + "-5d8f9c"},
		{owner: long, hash: "5d8f9c7b4z", want: strings.Repeat("a", 223) + "-5d8f9c7b4z"},
	}
	for _, tt := range tests {
		got := Name(tt.owner, tt.hash)
		if got != tt.want {
			t.Errorf("Name(%d chars, %q) = %q, want %q", len(tt.owner), tt.hash, got, tt.want)
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("Name(%d chars, %q) = %q is not a valid name: %v", len(tt.owner), tt.hash, got, errs)
		}
	}
}

// Data is already in the form the API server writes back when it re-encodes a revision (a
// metadata patch): decoding and encoding it again gives the same bytes.
func TestDataSurvivesReencoding(t *testing.T) {
	for _, tpl := range []*corev1.PodTemplateSpec{baseTemplate(), mapOrderTemplate(true), {}} {
		r := mustNew(t, Input{Template: tpl}, 1, nil)
		var v any // as the API server decodes: integers stay int64
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(r.Data.Raw, &v); err != nil {
			t.Fatal(err)
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(r.Data.Raw) {
			t.Errorf("re-encoded data differs:\n%s\n%s", r.Data.Raw, again)
		}
	}
}
