package sidecarinjection

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// A SidecarSet whose entry cannot be written says why (sidecarrules.NotRegisteredAnnotation, from
// which its InjectionRegistered condition is False); once the entries are written, it shows its
// generation registered and the reason goes.
func TestRegistrarMarksWhatKeepsASidecarSetUnregistered(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := admissionregistrationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	source := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "kruise-pods"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "pods.kruise.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9443/mutate-pod"), CABundle: []byte("ca")}}}}
	agent := set("agent", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
	agent.Generation = 1
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(source, agent).Build()
	r := &Registrar{Target: registration.Target{Client: c, Live: c, Configuration: "kruise-sidecarset-injection", Namespace: "kruise-system",
		Source: registration.Source{Configuration: "kruise-pods", Webhook: "pods.kruise.io"}}}
	annotations := func() map[string]string {
		got := &v1beta1.SidecarSet{}
		if err := c.Get(ctx, client.ObjectKey{Name: "agent"}, got); err != nil {
			t.Fatal(err)
		}
		return got.Annotations
	}
	if _, err := r.Reconcile(ctx, registration.One); err == nil {
		t.Fatal("no error without the configuration")
	}
	if why := annotations()[sidecarrules.NotRegisteredAnnotation]; !strings.Contains(why, "kruise-sidecarset-injection is missing") {
		t.Errorf("reason %q", why)
	}
	if err := c.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "kruise-sidecarset-injection"}}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the write, then the marks
		if _, err := r.Reconcile(ctx, registration.One); err != nil {
			t.Fatal(err)
		}
	}
	a := annotations()
	if _, still := a[sidecarrules.NotRegisteredAnnotation]; still || a[sidecarrules.RegisteredAnnotation] != "1" {
		t.Errorf("once written: annotations %v", a)
	}
}
