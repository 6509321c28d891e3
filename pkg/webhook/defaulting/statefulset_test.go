package defaulting

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
)

// astsApplied is an Advanced StatefulSet of OpenKruise v1.9.0's takeover fixture as the user
// applied it (apiVersion filled in per test); OpenKruise named its revision asts-inplace-7ccdb8894d.
const astsApplied = `{"apiVersion":"apps.kruise.io/VERSION","kind":"StatefulSet","metadata":{"annotations":{},"name":"asts-inplace","namespace":"takeover"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"asts-inplace"}},"serviceName":"asts-inplace","template":{"metadata":{"labels":{"app":"asts-inplace"}},"spec":{"containers":[{"image":"example.com/app:v1","name":"app"}],"readinessGates":[{"conditionType":"InPlaceUpdateReady"}],"terminationGracePeriodSeconds":0}},"updateStrategy":{"rollingUpdate":{"partition":1,"podUpdatePolicy":"InPlaceIfPossible"},"type":"RollingUpdate"},"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Mi"}},"storageClassName":""}}]}}`

// admit sends obj to the webhook at path (Options opts) as a create and returns obj patched.
func admit(t *testing.T, opts Options, path, obj string) []byte {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, h := range handlers(scheme, nil, opts) {
		if h.path != path {
			continue
		}
		resp := h.webhook.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte(obj)}}})
		if !resp.Allowed {
			t.Fatalf("%s: refused: %v", path, resp.Result)
		}
		if len(resp.Patch) == 0 {
			return []byte(obj)
		}
		patch, err := jsonpatch.DecodePatch(resp.Patch)
		if err != nil {
			t.Fatal(err)
		}
		out, err := patch.Apply([]byte(obj))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Fatalf("no webhook at %s", path)
	return nil
}

// The StatefulSet webhooks default the pod template and claim templates as OpenKruise does
// (unless TemplateDefaults is off, OpenKruise's TemplateNoDefaults), so the revision name is
// OpenKruise's; the v1beta1 one also gives the PVC retention policy, the v1alpha1 one, which has
// no such field, nothing in its place.
func TestStatefulSetWebhooks(t *testing.T) {
	for _, version := range []string{"v1alpha1", "v1beta1"} {
		path := "/mutate-apps-kruise-io-" + version + "-statefulset"
		obj := strings.Replace(astsApplied, "VERSION", version, 1)
		for _, templates := range []bool{true, false} {
			out := admit(t, Options{TemplateDefaults: templates}, path, obj)
			var sts v1beta1.StatefulSet // v1alpha1's fields are v1beta1's
			if err := json.Unmarshal(out, &sts); err != nil {
				t.Fatal(err)
			}
			name := revision.Name(sts.Name, revision.Hash(revision.Input{Template: &sts.Spec.Template}, nil))
			phase := sts.Spec.VolumeClaimTemplates[0].Status.Phase
			if templates {
				if name != "asts-inplace-7ccdb8894d" {
					t.Errorf("%s: revision name %s, want asts-inplace-7ccdb8894d:\n%s", version, name, out)
				}
				if phase != corev1.ClaimPending {
					t.Errorf("%s: claim template phase %q, want Pending", version, phase)
				}
			} else {
				if sts.Spec.Template.Spec.DNSPolicy != "" || phase != "" {
					t.Errorf("%s without template defaults: template or claim template defaulted:\n%s", version, out)
				}
			}
			if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru == nil || ru.MinReadySeconds == nil || ru.MaxUnavailable == nil {
				t.Errorf("%s: rollingUpdate not defaulted:\n%s", version, out)
			}
			policy := sts.Spec.PersistentVolumeClaimRetentionPolicy
			if version == "v1beta1" && (policy == nil || policy.WhenDeleted != "Retain" || policy.WhenScaled != "Retain") {
				t.Errorf("v1beta1: PVC retention policy %+v, want Retain/Retain", policy)
			}
			if version == "v1alpha1" && (policy != nil || strings.Contains(string(out), v1alpha1.ConversionV1beta1OnlyAnnotation)) {
				t.Errorf("v1alpha1: got v1beta1-only fields:\n%s", out)
			}
		}
	}
}

// DefaultHostNetworkHostPortsInPodTemplates applies to StatefulSet templates too.
func TestStatefulSetWebhookHostNetworkPorts(t *testing.T) {
	obj := `{"apiVersion":"apps.kruise.io/v1beta1","kind":"StatefulSet","metadata":{"name":"s","namespace":"ns"},"spec":{"selector":{"matchLabels":{"a":"b"}},` +
		`"template":{"spec":{"hostNetwork":true,"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]}}}}`
	for _, on := range []bool{true, false} {
		out := admit(t, Options{TemplateDefaults: true, HostNetworkHostPorts: on}, "/mutate-apps-kruise-io-v1beta1-statefulset", obj)
		var sts v1beta1.StatefulSet
		if err := json.Unmarshal(out, &sts); err != nil {
			t.Fatal(err)
		}
		want := int32(0)
		if on {
			want = 80
		}
		if got := sts.Spec.Template.Spec.Containers[0].Ports[0].HostPort; got != want {
			t.Errorf("HostNetworkHostPorts %v: hostPort %d, want %d", on, got, want)
		}
	}
}
