package webhookfuzz

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
	"testing"

	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"
)

// NewScheme is the manager's scheme (apis.NewScheme).
func NewScheme(tb testing.TB) *runtime.Scheme {
	s, err := kruisescheme.New()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// Target is one served webhook and the kind of the objects it is called for.
type Target struct {
	Path    string
	Webhook *admission.Webhook
	Kind    schema.GroupVersionKind
}

// recorder is a webhook.Server that keeps what is registered on it; nothing else of it is called.
type recorder struct {
	webhook.Server
	tb      testing.TB
	scheme  *runtime.Scheme
	targets []Target
}

func (r *recorder) Register(path string, h http.Handler) {
	wh, ok := h.(*admission.Webhook)
	if !ok {
		r.tb.Fatalf("%s serves a %T, not an admission webhook", path, h)
	}
	// A panic must reach the fuzzer, not become a 500 answer (pkg/webhook/mount serves every
	// handler inside this one webhook, so no inner one recovers it first).
	wh.RecoverPanic = ptr.To(false)
	r.targets = append(r.targets, Target{Path: path, Webhook: wh, Kind: kindOf(r.tb, r.scheme, path)})
}

// Targets calls register with a server that records what it serves, and returns each webhook with
// the kind its path names: "/mutate-apps-kruise-io-v1alpha1-cloneset" is apps.kruise.io/v1alpha1
// CloneSet, "/mutate-pod" is the core v1 Pod. scheme must know each kind.
func Targets(tb testing.TB, scheme *runtime.Scheme, register func(webhook.Server)) []Target {
	tb.Helper()
	logf.SetLogger(logr.Discard())
	r := &recorder{tb: tb, scheme: scheme}
	register(r)
	if len(r.targets) == 0 {
		tb.Fatal("Register served no webhook")
	}
	return r.targets
}

func kindOf(tb testing.TB, scheme *runtime.Scheme, path string) schema.GroupVersionKind {
	_, name, ok := strings.Cut(strings.TrimPrefix(path, "/"), "-")
	if !ok {
		tb.Fatalf("webhook path %q: want /mutate-<group>-<version>-<kind> or /validate-...", path)
	}
	parts := strings.Split(name, "-")
	gv := schema.GroupVersion{Version: "v1"} // the core group's paths name only the kind
	if n := len(parts); n >= 3 {
		gv = schema.GroupVersion{Group: strings.Join(parts[:n-2], "."), Version: parts[n-2]}
	}
	for kind := range scheme.KnownTypes(gv) {
		if strings.EqualFold(kind, parts[len(parts)-1]) {
			return gv.WithKind(kind)
		}
	}
	tb.Fatalf("webhook path %q: the scheme has no kind %q in %s", path, parts[len(parts)-1], gv)
	return schema.GroupVersionKind{}
}

// Seed adds to f's corpus, for every target, a CREATE and an UPDATE of each sample of its kind
// (JSON or YAML, a List's items each) and of a minimal object, and objects the decoder refuses
// (truncated, fields of the wrong types, another kind, none). A hand-written sample that does not
// parse, or of a kind no target serves, fails f; the compat oracle's are taken when they fit.
func Seed(f *testing.F, targets []Target, samples ...string) {
	f.Helper()
	byKind := map[schema.GroupVersionKind][][]byte{}
	add := func(origin string, doc []byte, strict bool) {
		objs, err := objects(doc)
		if err != nil && strict {
			f.Fatalf("%s: %v", origin, err)
		}
		for _, obj := range objs {
			gvk := gvkOf(obj)
			if !served(targets, gvk) {
				if strict {
					f.Fatalf("%s: no webhook here serves %s", origin, gvk)
				}
				continue
			}
			byKind[gvk] = append(byKind[gvk], obj)
		}
	}
	for i, s := range samples {
		add(fmt.Sprintf("hand-written sample %d", i), []byte(s), true)
	}
	for _, d := range oracleSamples(f) {
		add(d.file, d.data, false)
	}
	// Seeds are dear (go test -fuzz first runs each alone for its coverage, tens a second on a
	// 2-core machine, within FUZZTIME), so each kind gets its samples, a minimal object and two
	// inputs the decoder refuses: the decoder is shared, its failures are spread over the webhooks.
	none := []string{`null`, `[]`, ``, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`}
	for i, tg := range targets {
		apiVersion, kind := tg.Kind.ToAPIVersionAndKind()
		head := `{"apiVersion":"` + apiVersion + `","kind":"` + kind + `"`
		minimal := []byte(head + `,"metadata":{"name":"x","namespace":"ns","uid":"u1"},"spec":{}}`)
		for _, obj := range append(byKind[tg.Kind], minimal) {
			f.Add(tg.Path, false, obj, []byte(nil))
			f.Add(tg.Path, true, obj, minimal)
		}
		malformed := []string{string(minimal[:len(minimal)/2]), head + `,"metadata":[],"spec":"x","status":7}`,
			head + `,"metadata":{"name":1,"labels":{"a":null}},"spec":{"replicas":"3","selector":[],"template":1}}`}
		f.Add(tg.Path, false, []byte(malformed[i%len(malformed)]), []byte(nil))
		f.Add(tg.Path, true, minimal, []byte(none[i%len(none)]))
	}
}

// objects are the JSON objects of a YAML or JSON document: the document, or a List's items.
func objects(doc []byte) ([][]byte, error) {
	raw, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var list struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	if !strings.HasSuffix(list.Kind, "List") {
		return [][]byte{raw}, nil
	}
	out := make([][]byte, len(list.Items))
	for i, item := range list.Items {
		out[i] = item
	}
	return out, nil
}

func gvkOf(obj []byte) schema.GroupVersionKind {
	var tm metav1.TypeMeta
	_ = json.Unmarshal(obj, &tm)
	return tm.GroupVersionKind()
}

func served(targets []Target, gvk schema.GroupVersionKind) bool {
	for _, tg := range targets {
		if tg.Kind == gvk {
			return true
		}
	}
	return false
}

// Check sends obj to the webhook path names (a CREATE, or an UPDATE from old) and fails t unless
// the answer is well formed: allowed, or refused with an HTTP error code (4xx, 5xx) and no patch;
// a patch only from a mutating webhook, a JSON Patch that applies to obj. A path that names no
// target (the fuzzer changed it) picks one by its hash.
func Check(t *testing.T, targets []Target, path string, update bool, obj, old []byte) {
	t.Helper()
	tg := pick(targets, path)
	gvk := metav1.GroupVersionKind(tg.Kind)
	plural, _ := meta.UnsafeGuessKindToResource(tg.Kind)
	gvr := metav1.GroupVersionResource(plural)
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "fuzz", Kind: gvk, Resource: gvr, RequestKind: &gvk, RequestResource: &gvr,
		Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: obj},
	}}
	if update {
		req.Operation, req.OldObject = admissionv1.Update, runtime.RawExtension{Raw: old}
	}
	resp := tg.Webhook.Handle(context.Background(), req)

	if resp.Result == nil || resp.UID != req.UID {
		t.Fatalf("%s %s: incomplete answer (result %v, uid %q)", req.Operation, tg.Path, resp.Result, resp.UID)
	}
	if msg := resp.Result.Message; strings.HasPrefix(msg, "panic: ") {
		t.Fatalf("%s %s: the webhook panicked: %s", req.Operation, tg.Path, msg)
	}
	if !resp.Allowed {
		if c := resp.Result.Code; c < 400 || c > 599 {
			t.Fatalf("%s %s: refused with code %d (%q), want 4xx or 5xx", req.Operation, tg.Path, c, resp.Result.Message)
		}
		if len(resp.Patch) > 0 {
			t.Fatalf("%s %s: refused with a patch %s", req.Operation, tg.Path, resp.Patch)
		}
		return
	}
	if len(resp.Patch) == 0 {
		return
	}
	if !strings.HasPrefix(tg.Path, "/mutate-") {
		t.Fatalf("%s %s: a validating webhook answered with a patch %s", req.Operation, tg.Path, resp.Patch)
	}
	if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("%s %s: patch type %v, want JSONPatch", req.Operation, tg.Path, resp.PatchType)
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		t.Fatalf("%s %s: patch %s is not a JSON Patch: %v", req.Operation, tg.Path, resp.Patch, err)
	}
	patched, err := patch.Apply(obj)
	if err != nil {
		t.Fatalf("%s %s: patch %s does not apply to the object: %v", req.Operation, tg.Path, resp.Patch, err)
	}
	if !json.Valid(patched) {
		t.Fatalf("%s %s: the patched object is not JSON: %s", req.Operation, tg.Path, patched)
	}
}

func pick(targets []Target, path string) Target {
	for _, tg := range targets {
		if tg.Path == path {
			return tg
		}
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(path))
	return targets[h.Sum32()%uint32(len(targets))]
}
