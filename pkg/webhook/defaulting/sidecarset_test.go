package defaulting

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/test/compat"
)

// sidecarSetFixture is SidecarSet sc-log of OpenKruise v1.9.0's takeover fixture: what the user
// sent (its last-applied-configuration with the image patched to log:v2, as the fixture's history
// has it), and what OpenKruise stored: its spec (generic JSON) and its two hash annotations.
type sidecarSetFixture struct {
	user        map[string]any
	storedSpec  any
	annotations map[string]string
}

func readSidecarSetFixture(t *testing.T) sidecarSetFixture {
	t.Helper()
	raw, err := compat.ReadSidecarSetFixture(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	fx := sidecarSetFixture{storedSpec: raw.StoredSpec, annotations: map[string]string{}}
	if err := json.Unmarshal(raw.Applied, &fx.user); err != nil {
		t.Fatalf("sc-log's last-applied-configuration: %v", err)
	}
	for _, key := range []string{sidecarrules.HashAnnotation, sidecarrules.HashWithoutImageAnnotation} {
		if raw.Annotations[key] == "" {
			t.Fatalf("sc-log has no annotation %s", key)
		}
		fx.annotations[key] = raw.Annotations[key]
	}
	return fx
}

// admitSidecarSet sends obj (old, on an update) to the SidecarSet webhook of version and returns
// obj patched, as generic JSON.
func admitSidecarSet(t *testing.T, version string, op admissionv1.Operation, obj, old []byte) map[string]any {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	path := "/mutate-apps-kruise-io-" + version + "-sidecarset"
	for _, h := range handlers(scheme, nil, Options{TemplateDefaults: true}) {
		if h.path != path {
			continue
		}
		req := admissionv1.AdmissionRequest{Operation: op, Object: runtime.RawExtension{Raw: obj}}
		if old != nil {
			req.OldObject = runtime.RawExtension{Raw: old}
		}
		resp := h.webhook.Handle(context.Background(), admission.Request{AdmissionRequest: req})
		if !resp.Allowed {
			t.Fatalf("%s %s: refused: %v", path, op, resp.Result)
		}
		out := obj
		if len(resp.Patch) > 0 {
			patch, err := jsonpatch.DecodePatch(resp.Patch)
			if err != nil {
				t.Fatal(err)
			}
			if out, err = patch.Apply(obj); err != nil {
				t.Fatal(err)
			}
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Fatalf("no webhook at %s", path)
	return nil
}

// The SidecarSet webhooks, of both versions, on create and on update, store the user's sc-log as
// OpenKruise stored it: the same spec and the same two hash annotations (replacing stale ones).
func TestSidecarSetWebhookHashesOpenKruiseFixture(t *testing.T) {
	fx := readSidecarSetFixture(t)
	for _, version := range []string{"v1alpha1", "v1beta1"} {
		user := runtime.DeepCopyJSON(fx.user)
		user["apiVersion"] = "apps.kruise.io/" + version
		obj, err := json.Marshal(user)
		if err != nil {
			t.Fatal(err)
		}
		stale := runtime.DeepCopyJSON(user)
		stale["metadata"].(map[string]any)["annotations"] = map[string]any{
			sidecarrules.HashAnnotation: "stale", sidecarrules.HashWithoutImageAnnotation: "stale",
		}
		staleObj, err := json.Marshal(stale)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			op       admissionv1.Operation
			obj, old []byte
		}{
			{admissionv1.Create, obj, nil},
			{admissionv1.Update, obj, staleObj},
			{admissionv1.Update, staleObj, staleObj},
		} {
			out := admitSidecarSet(t, version, c.op, c.obj, c.old)
			annotations, _ := out["metadata"].(map[string]any)["annotations"].(map[string]any)
			if len(annotations) != len(fx.annotations) {
				t.Errorf("%s %s: annotations %v, want only the hashes", version, c.op, annotations)
			}
			for key, want := range fx.annotations {
				if got := annotations[key]; got != want {
					t.Errorf("%s %s: annotation %s = %v, want OpenKruise's %s", version, c.op, key, got, want)
				}
			}
			if !reflect.DeepEqual(out["spec"], fx.storedSpec) {
				got, _ := json.Marshal(out["spec"])
				want, _ := json.Marshal(fx.storedSpec)
				t.Errorf("%s %s: spec differs from OpenKruise's stored spec\n got: %s\nwant: %s", version, c.op, got, want)
			}
		}
	}
}

// The v1alpha1 webhook hashes what the v1beta1 webhook hashes, for sidecars with every part the
// two versions carry (init containers as native sidecars, so that they count too).
func TestSidecarSetWebhookVersionsHashAlike(t *testing.T) {
	spec := `"spec":{"selector":{"matchLabels":{"a":"b"}},` +
		`"containers":[{"name":"s","image":"s:v1","podInjectPolicy":"AfterAppContainer","upgradeStrategy":{"upgradeType":"HotUpgrade","hotUpgradeEmptyImage":"empty:v1"},` +
		`"shareVolumePolicy":{"type":"enabled"},"shareVolumeDevicePolicy":{"type":"enabled"},` +
		`"transferEnv":[{"sourceContainerNameFrom":{"fieldRef":{"fieldPath":"metadata.labels['c']"}},"envNames":["A","B"]}],` +
		`"resourcesPolicy":{"targetContainersMode":"sum","resourcesExpr":{"limits":{"cpu":"50%"}}},` +
		`"readinessProbe":{"exec":{"command":["true"]}},"resources":{"limits":{"cpu":"0.0001"}}}],` +
		`"initContainers":[{"name":"i","image":"i","restartPolicy":"Always","env":[{"name":"N","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}]}`
	hashes := map[string]map[string]any{}
	for _, version := range []string{"v1alpha1", "v1beta1"} {
		obj := `{"apiVersion":"apps.kruise.io/` + version + `","kind":"SidecarSet","metadata":{"name":"s"},` + spec + `}`
		out := admitSidecarSet(t, version, admissionv1.Create, []byte(obj), nil)
		annotations, _ := out["metadata"].(map[string]any)["annotations"].(map[string]any)
		if annotations[sidecarrules.HashAnnotation] == nil || annotations[sidecarrules.HashWithoutImageAnnotation] == nil {
			t.Fatalf("%s: no hash annotations: %v", version, out["metadata"])
		}
		hashes[version] = annotations
	}
	if !reflect.DeepEqual(hashes["v1alpha1"], hashes["v1beta1"]) {
		t.Errorf("hash annotations differ: v1alpha1 %v, v1beta1 %v", hashes["v1alpha1"], hashes["v1beta1"])
	}
}
