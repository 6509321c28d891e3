package defaulting

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
)

// A kind served but not run yet is stored with a warning saying so; a kind Kruise runs is not.
func TestNotRunYetWarns(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*admission.Webhook{}
	for _, h := range handlers(scheme, nil, Options{}) {
		byPath[h.path] = h.webhook
	}
	req := func(kind, version, body string) admission.Request {
		return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create,
			Object: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps.kruise.io/` + version + `","kind":"` + kind + `","metadata":{"name":"x","namespace":"ns"}` + body + `}`)}}}
	}
	if err := policyv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	run := []string{"cloneset", "containerrecreaterequest", "imagepulljob", "imagelistpulljob", "nodeimage", "statefulset", "podunavailablebudget", "sidecarset",
		"daemonset", "broadcastjob", "advancedcronjob", "uniteddeployment", "persistentpodstate", "workloadspread", "resourcedistribution",
		"ephemeraljob"}
	ppm := warnNotRun(notRunYet["podprobemarker"], byPath["/mutate-apps-kruise-io-v1alpha1-podprobemarker"])
	resp := ppm.Handle(context.Background(), req("PodProbeMarker", "v1alpha1", `,"spec":{}`))
	if !resp.Allowed || len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "does not run PodProbeMarker yet") {
		t.Errorf("PodProbeMarker: allowed %v, warnings %v", resp.Allowed, resp.Warnings)
	}
	for _, h := range handlers(scheme, nil, Options{}) {
		kind := h.path[strings.LastIndexByte(h.path, '-')+1:]
		if _, warned := notRunYet[kind]; !warned && !slices.Contains(run, kind) {
			t.Errorf("%s: served, neither run nor warned about", h.path)
		}
	}
	for _, run := range run {
		if _, warned := notRunYet[run]; warned {
			t.Errorf("%s is run by Kruise, yet warned about", run)
		}
	}
}

// A kind whose feature gate is off is stored with a warning naming the gate.
func TestGatedOffWarns(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	srv := webhook.NewServer(webhook.Options{})
	Register(srv, scheme, nil, Options{GatedOff: map[string]string{"resourcedistribution": "ResourceDistributionGate"}})
	body := `{"apiVersion":"apps.kruise.io/v1alpha1","kind":"ResourceDistribution","metadata":{"name":"x"},"spec":{"resource":{},"targets":{}}}`
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","object":` + body + `}}`
	rec := httptest.NewRecorder()
	hreq := httptest.NewRequest(http.MethodPost, "/mutate-apps-kruise-io-v1alpha1-resourcedistribution", strings.NewReader(review))
	hreq.Header.Set("Content-Type", "application/json")
	srv.WebhookMux().ServeHTTP(rec, hreq)
	if out := rec.Body.String(); !strings.Contains(out, `"allowed":true`) || !strings.Contains(out, "ResourceDistributionGate is off") {
		t.Errorf("answer: %s", out)
	}
}
