package registration

import (
	"context"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// The create of an object in a namespace that holds PerNamespace of its kind already is refused
// with 403 naming the cap and the flag, before any entry is written; below the cap, on an update,
// or with no cap, the gate goes on to register (here it then fails: no source configuration).
func TestGateCapsObjectsPerNamespace(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cm := func(ns, name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cm("full", "a"), cm("full", "b"), cm("room", "a")).Build()
	g := &Gate[*corev1.ConfigMap, admissionregistrationv1.MutatingWebhook]{Reader: c, Kind: "ConfigMap", Source: Source{Configuration: "missing"},
		Key: func(o *corev1.ConfigMap) string { return o.Namespace + "/" + o.Name }, PerNamespace: 2,
		List: func() client.ObjectList { return &corev1.ConfigMapList{} }}
	in := func(op admissionv1.Operation) context.Context {
		return admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: op}})
	}

	err := g.Admit(in(admissionv1.Create), cm("full", "c"))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "namespace full holds 2 ConfigMaps") ||
		!strings.Contains(err.Error(), "--max-entry-objects-per-namespace=2") {
		t.Errorf("create over the cap: %v", err)
	}
	dryRun := admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, DryRun: ptr.To(true)}})
	if err := g.Admit(dryRun, cm("full", "c")); !apierrors.IsForbidden(err) {
		t.Errorf("dry-run create over the cap: %v; want 403 as for the real one", err)
	}
	if err := g.Admit(dryRun, cm("room", "b")); err != nil {
		t.Errorf("dry-run create below the cap: %v; want allowed, nothing registered", err)
	}
	for what, err := range map[string]error{
		"create below the cap":   g.Admit(in(admissionv1.Create), cm("room", "b")),
		"update at the cap":      g.Admit(in(admissionv1.Update), cm("full", "a")),
		"create with no cap set": (&Gate[*corev1.ConfigMap, admissionregistrationv1.MutatingWebhook]{Reader: c, Kind: "ConfigMap", Source: g.Source, Key: g.Key}).Admit(in(admissionv1.Create), cm("full", "c")),
	} {
		if err == nil || apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "cannot be registered") {
			t.Errorf("%s: %v; want the registration's own error", what, err)
		}
	}
}
