package mount_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/pkg/webhook/callers"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// review posts an AdmissionReview for a ConfigMap to path on srv, as caller, marked as passed on
// when forwarded, and returns the answer.
func review(t *testing.T, srv webhook.Server, path string, caller callers.Kind, forwarded bool) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Create,
			Kind:   metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Object: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(body)))
	r.Header.Set("Content-Type", "application/json")
	if forwarded {
		r.Header.Set(mount.ForwardedHeader, "1")
	}
	r = r.WithContext(callers.WithKind(r.Context(), caller))
	w := httptest.NewRecorder()
	srv.WebhookMux().ServeHTTP(w, r)
	out := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(w.Body.Bytes(), out); err != nil || out.Response == nil {
		t.Fatalf("%s answered %d %q: %v", path, w.Code, w.Body.String(), err)
	}
	return out.Response
}

// echo answers with the suffix and the forwarded mark its context carries.
var echo = admission.HandlerFunc(func(ctx context.Context, _ admission.Request) admission.Response {
	return admission.Allowed(fmt.Sprintf("suffix=%q forwarded=%t", mount.Suffix(ctx), mount.Forwarded(ctx)))
})

// A handler mounted at a path ending in "/" answers every path under it and reads the rest of the
// path; one mounted at an exact path reads none. The forwarded mark counts from a replica only.
func TestContextOfEveryMount(t *testing.T) {
	srv := webhook.NewServer(webhook.Options{})
	mount.Admission(srv, "/per-object/", echo)
	mount.Admission(srv, "/exact", echo)
	for _, tc := range []struct {
		path      string
		caller    callers.Kind
		forwarded bool
		want      string
	}{
		{"/per-object/ns/name", callers.APIServer, false, `suffix="ns/name" forwarded=false`},
		{"/exact", callers.APIServer, false, `suffix="" forwarded=false`},
		{"/per-object/ns", callers.Replica, true, `suffix="ns" forwarded=true`},
		{"/exact", callers.Replica, true, `suffix="" forwarded=true`},
		{"/per-object/ns", callers.APIServer, true, `suffix="ns" forwarded=false`},
		{"/per-object/ns", callers.Anonymous, true, `suffix="ns" forwarded=false`},
		{"/per-object/ns", callers.Replica, false, `suffix="ns" forwarded=false`},
	} {
		resp := review(t, srv, tc.path, tc.caller, tc.forwarded)
		if !resp.Allowed || resp.Result == nil || resp.Result.Message != tc.want {
			t.Errorf("%s from %s (forwarded %t): %+v, want allowed %s", tc.path, tc.caller, tc.forwarded, resp.Result, tc.want)
		}
	}
}

type panicking struct{}

func (panicking) ValidateCreate(context.Context, *corev1.ConfigMap) (admission.Warnings, error) {
	panic("boom")
}
func (panicking) ValidateUpdate(context.Context, *corev1.ConfigMap, *corev1.ConfigMap) (admission.Warnings, error) {
	return nil, nil
}
func (panicking) ValidateDelete(context.Context, *corev1.ConfigMap) (admission.Warnings, error) {
	return nil, nil
}

// A validator built with admission.WithValidator is served by one webhook with the mount's
// context, and a panic in it is answered with a 500 naming it.
func TestBuiltWebhookIsServedByItsHandler(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{handlers: map[string]http.Handler{}}
	mount.Admission(rec, "/validate", admission.WithValidator[*corev1.ConfigMap](scheme, panicking{}))
	wh, ok := rec.handlers["/validate"].(*admission.Webhook)
	if !ok || wh.WithContextFunc == nil {
		t.Fatalf("served %T, want an admission webhook with the mount's context", rec.handlers["/validate"])
	}
	if _, nested := wh.Handler.(*admission.Webhook); nested {
		t.Error("the built webhook is served inside another one")
	}
	srv := webhook.NewServer(webhook.Options{})
	mount.Admission(srv, "/validate", admission.WithValidator[*corev1.ConfigMap](scheme, panicking{}))
	resp := review(t, srv, "/validate", callers.APIServer, false)
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusInternalServerError || !strings.Contains(resp.Result.Message, "boom") {
		t.Errorf("a panicking validator answered %+v, want a 500 naming the panic", resp.Result)
	}
}

// A webhook that brings options of its own is refused when mounted: they are the mount's.
func TestOwnOptionsRefused(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a webhook with its own WithContextFunc was mounted")
		}
	}()
	mount.Admission(&recorder{handlers: map[string]http.Handler{}}, "/x", &admission.Webhook{Handler: echo,
		WithContextFunc: func(ctx context.Context, _ *http.Request) context.Context { return ctx }})
}

// recorder is a webhook server that keeps what is registered on it.
type recorder struct {
	webhook.Server
	handlers map[string]http.Handler
}

func (r *recorder) Register(path string, h http.Handler) { r.handlers[path] = h }
