package revision

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestTemplateOfRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		tpl  *corev1.PodTemplateSpec
	}{
		{name: "rich template", tpl: baseTemplate()},
		{name: "empty template", tpl: &corev1.PodTemplateSpec{}},
		{name: "map order stress", tpl: mapOrderTemplate(true)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TemplateOf(mustNew(t, Input{Template: tt.tpl}, 1, nil))
			if err != nil {
				t.Fatalf("TemplateOf: %v", err)
			}
			if !equality.Semantic.DeepEqual(got, tt.tpl) {
				t.Errorf("TemplateOf(New(t)) = %+v, want %+v", got, tt.tpl)
			}
		})
	}
}

// Claim templates are recorded as a hash annotation, never in Data: a claim-template-only
// change makes the same revision.
func TestClaimTemplatesRecordedAsHash(t *testing.T) {
	with := mustNew(t, Input{Template: baseTemplate(), VolumeClaimTemplates: claimTemplates(), RecordClaimTemplates: true}, 1, nil)
	without := mustNew(t, Input{Template: baseTemplate(), RecordClaimTemplates: true}, 1, nil)
	if with.Name != without.Name || string(with.Data.Raw) != string(without.Data.Raw) {
		t.Errorf("claim templates changed the revision: %s vs %s", with.Name, without.Name)
	}
	if h, ok := ClaimTemplatesHashOf(with); !ok || h == "" || h != ClaimTemplatesHash(claimTemplates()) {
		t.Errorf("claim-template hash = %q (%v), want %q", h, ok, ClaimTemplatesHash(claimTemplates()))
	}
	if h, ok := ClaimTemplatesHashOf(without); !ok || h != "" {
		t.Errorf("claim-template hash without templates = %q (%v), want \"\" recorded", h, ok)
	}
	if !ClaimTemplatesChanged(with, without) || ClaimTemplatesChanged(with, with) {
		t.Error("ClaimTemplatesChanged does not tell the two apart")
	}
	plain := mustNew(t, Input{Template: baseTemplate()}, 1, nil)
	if _, ok := ClaimTemplatesHashOf(plain); ok || ClaimTemplatesChanged(plain, with) {
		t.Error("a revision without the record must count as unchanged")
	}
	grown := claimTemplates()
	grown[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	if ClaimTemplatesHash(grown) == ClaimTemplatesHash(claimTemplates()) {
		t.Error("a storage request change kept the claim-template hash")
	}
}

func TestTemplateOf(t *testing.T) {
	tests := []struct {
		name    string
		rev     *appsv1.ControllerRevision
		image   string // of the first container; "" with wantErr
		wantErr string
	}{
		{name: "data written by OpenKruise, with $patch and null timestamp",
			rev: rawRevision("web-1", 1, `{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null},`+
				`"spec":{"containers":[{"name":"app","image":"app:1","resources":{}}]}}}}`),
			image: "app:1"},
		{name: "fields unknown to this API version are ignored",
			rev:   rawRevision("web-1", 1, `{"spec":{"template":{"spec":{"futureField":1,"containers":[{"name":"app","image":"app:2"}]}}}}`),
			image: "app:2"},
		{name: "data held as an object",
			rev: &appsv1.ControllerRevision{Data: runtime.RawExtension{Object: &runtime.Unknown{
				Raw: []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"app:3"}]}}}}`)}}},
			image: "app:3"},
		{name: "nil revision", wantErr: "nil ControllerRevision"},
		{name: "empty data", rev: rawRevision("web-1", 1, ""), wantErr: "empty data"},
		{name: "not JSON", rev: rawRevision("web-1", 1, "{spec"), wantErr: "decode data"},
		{name: "no template", rev: rawRevision("web-1", 1, `{"spec":{"replicas":3}}`), wantErr: "no spec.template"},
		{name: "null template", rev: rawRevision("web-1", 1, `{"spec":{"template":null}}`), wantErr: "no spec.template"},
		{name: "template of the wrong type", rev: rawRevision("web-1", 1, `{"spec":{"template":[]}}`), wantErr: "decode data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TemplateOf(tt.rev)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("TemplateOf error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("TemplateOf: %v", err)
			}
			if len(got.Spec.Containers) != 1 || got.Spec.Containers[0].Image != tt.image {
				t.Errorf("containers = %+v, want one with image %s", got.Spec.Containers, tt.image)
			}
		})
	}
}

func FuzzTemplateOf(f *testing.F) {
	f.Add([]byte(`{"spec":{"template":{"$patch":"replace","spec":{"containers":[{"name":"a"}]}}}}`))
	f.Add([]byte(`{"spec":{"template":{}, "volumeClaimTemplates":[{"metadata":{"name":"d"}}]}}`))
	f.Add([]byte(`{"spec":{"template":7}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rev := rawRevision("fuzz", 1, string(data))
		tpl, err := TemplateOf(rev)
		if err == nil && tpl == nil {
			t.Fatal("TemplateOf returned neither a template nor an error")
		}
		if !Equal(rev, rev.DeepCopy()) && err == nil {
			t.Fatal("a readable revision does not equal its copy")
		}
	})
}
