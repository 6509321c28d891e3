package sidecarrules

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func withPatch(name string, policy v1beta1.SidecarSetPatchPolicyType, annotations map[string]string) *v1beta1.SidecarSet {
	s := newSet(name, sidecar(name+"-c", "i"))
	s.Spec.PatchPodMetadata = []v1beta1.SidecarSetPatchPodMetadata{{Annotations: annotations, PatchPolicy: policy}}
	return s
}

// TestInjectPatchPodMetadata: pod annotations × patchPodMetadata → pod annotations.
func TestInjectPatchPodMetadata(t *testing.T) {
	cases := []struct {
		name    string
		pod     map[string]string
		sets    []*v1beta1.SidecarSet
		want    map[string]string
		wantErr string
	}{
		{"Retain keeps the pod's value", map[string]string{"k": "pod"},
			[]*v1beta1.SidecarSet{withPatch("a", v1beta1.SidecarSetRetainPatchPolicy, map[string]string{"k": "set", "new": "v"})},
			map[string]string{"k": "pod", "new": "v"}, ""},
		{"an empty policy retains", map[string]string{"k": "pod"},
			[]*v1beta1.SidecarSet{withPatch("a", "", map[string]string{"k": "set"})},
			map[string]string{"k": "pod"}, ""},
		{"Overwrite replaces it", map[string]string{"k": "pod"},
			[]*v1beta1.SidecarSet{withPatch("a", v1beta1.SidecarSetOverwritePatchPolicy, map[string]string{"k": "set"})},
			map[string]string{"k": "set"}, ""},
		{"MergePatchJson merges SidecarSets' JSON in name order", map[string]string{"oom": `{"app":1}`},
			[]*v1beta1.SidecarSet{
				withPatch("b", v1beta1.SidecarSetMergePatchJSONPatchPolicy, map[string]string{"oom": `{"envoy":2,"app":null}`}),
				withPatch("a", v1beta1.SidecarSetMergePatchJSONPatchPolicy, map[string]string{"oom": `{"log":1}`}),
			},
			map[string]string{"oom": `{"envoy":2,"log":1}`}, ""},
		{"MergePatchJson sets a missing value as given", nil,
			[]*v1beta1.SidecarSet{withPatch("a", v1beta1.SidecarSetMergePatchJSONPatchPolicy, map[string]string{"oom": `{"log": 1}`})},
			map[string]string{"oom": `{"log": 1}`}, ""},
		{"MergePatchJson into a value that is not JSON fails", map[string]string{"oom": "plain"},
			[]*v1beta1.SidecarSet{withPatch("a", v1beta1.SidecarSetMergePatchJSONPatchPolicy, map[string]string{"oom": `{"log":1}`})},
			nil, "SidecarSet a: merge patch of annotation oom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := appPod()
			pod.Annotations = tc.pod
			res, err := Inject(pod, tc.sets, Options{Now: testNow})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if got := res.Pod.Annotations[k]; got != v {
					t.Errorf("annotation %s = %s, want %s", k, got, v)
				}
			}
		})
	}
}

// TestCheckPatchMetadata: the whitelist decides which keys a SidecarSet may patch.
func TestCheckPatchMetadata(t *testing.T) {
	set := withPatch("a", v1beta1.SidecarSetOverwritePatchPolicy, map[string]string{"oom.example.com/score": "1"})
	set.Labels = map[string]string{"team": "mesh"}
	rule := func(sel map[string]string, exprs ...string) PatchWhitelistRule {
		r := PatchWhitelistRule{AllowedAnnotationKeyExprs: exprs}
		if sel != nil {
			r.Selector = &metav1.LabelSelector{MatchLabels: sel}
		}
		return r
	}
	cases := []struct {
		name    string
		policy  PatchPolicy
		wantErr string
	}{
		{"no whitelist", PatchPolicy{}, "whitelist not found"},
		{"no whitelist, defaults allowed", PatchPolicy{DefaultsAllowed: true}, ""},
		{"a matching rule allows the key", PatchPolicy{Whitelist: &PatchWhitelist{Rules: []PatchWhitelistRule{rule(nil, `^oom\.example\.com/`)}}}, ""},
		{"a rule for other SidecarSets does not apply", PatchPolicy{Whitelist: &PatchWhitelist{Rules: []PatchWhitelistRule{rule(map[string]string{"team": "log"}, ".*")}}}, "are not allowed"},
		{"the rule's expressions miss the key", PatchPolicy{Whitelist: &PatchWhitelist{Rules: []PatchWhitelistRule{rule(map[string]string{"team": "mesh"}, "^other/")}}}, "annotation oom.example.com/score is not allowed"},
		{"an invalid expression", PatchPolicy{Whitelist: &PatchWhitelist{Rules: []PatchWhitelistRule{rule(nil, "(")}}}, "whitelist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPatchMetadata(set, tc.policy)
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			_, err = Inject(appPod(), []*v1beta1.SidecarSet{set}, Options{PatchPolicy: &tc.policy})
			if (err == nil) != (tc.wantErr == "") {
				t.Fatalf("Inject err = %v, want one only when the policy refuses", err)
			}
		})
	}
}
