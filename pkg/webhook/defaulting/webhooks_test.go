package defaulting

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
)

// Every kind served has a controller: a kind added to the API must be added here with its
// controller (a kind nothing runs would be stored silently).
func TestEveryKindServedRuns(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1alpha1.AddToScheme, v1beta1.AddToScheme, policyv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	run := []string{"cloneset", "containerrecreaterequest", "imagepulljob", "imagelistpulljob", "nodeimage", "statefulset", "podunavailablebudget", "sidecarset",
		"daemonset", "broadcastjob", "advancedcronjob", "uniteddeployment", "persistentpodstate", "workloadspread", "resourcedistribution",
		"podprobemarker", "nodepodprobe", "ephemeraljob"}
	for _, h := range handlers(scheme, nil, Options{}) {
		if kind := h.path[strings.LastIndexByte(h.path, '-')+1:]; !slices.Contains(run, kind) {
			t.Errorf("%s: served, and no controller runs it", h.path)
		}
	}
}

// A kind whose feature gate is off is refused as OpenKruise refuses it ("feature-gate X is not
// enabled", 403) on create and on a spec change; an update of its metadata only (a finalizer
// removed, so that it can be deleted) passes.
func TestGatedOffRefused(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	srv := webhook.NewServer(webhook.Options{})
	Register(srv, scheme, nil, Options{GatedOff: map[string]string{"resourcedistribution": "ResourceDistributionGate"}})
	obj := func(labels, targets string) string {
		return `{"apiVersion":"apps.kruise.io/v1alpha1","kind":"ResourceDistribution","metadata":{"name":"x","labels":{` + labels +
			`}},"spec":{"resource":{},"targets":{` + targets + `}}}`
	}
	for _, tc := range []struct {
		name, op, old, obj string
		refused            bool
	}{
		{"create", "CREATE", "", obj("", ""), true},
		{"labels only", "UPDATE", obj("", ""), obj(`"a":"b"`, ""), false},
		{"spec", "UPDATE", obj("", ""), obj("", `"allNamespaces":true`), true},
		{"delete", "DELETE", obj("", ""), "", false},
	} {
		review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"` + tc.op +
			`","kind":{"group":"apps.kruise.io","version":"v1alpha1","kind":"ResourceDistribution"}`
		if tc.obj != "" {
			review += `,"object":` + tc.obj
		}
		if tc.old != "" {
			review += `,"oldObject":` + tc.old
		}
		review += `}}`
		rec := httptest.NewRecorder()
		hreq := httptest.NewRequest(http.MethodPost, "/mutate-apps-kruise-io-v1alpha1-resourcedistribution", strings.NewReader(review))
		hreq.Header.Set("Content-Type", "application/json")
		srv.WebhookMux().ServeHTTP(rec, hreq)
		out := rec.Body.String()
		refused := strings.Contains(out, `"allowed":false`) && strings.Contains(out, `"code":403`) &&
			strings.Contains(out, "feature-gate ResourceDistributionGate is not enabled")
		if refused != tc.refused || (!tc.refused && !strings.Contains(out, `"allowed":true`)) {
			t.Errorf("%s: %s; want refused %t", tc.name, out, tc.refused)
		}
	}
}
