package budgetguard

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/registrationmark"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// Issue 33: a budget whose entries cannot be written says why (registrationmark.Entries, from
// which its ProtectionRegistered condition is False), and shows its generation registered once
// they are.
func TestRegistrarMarksBudgetsWhoseEntriesCannotBeWritten(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{admissionregistrationv1.AddToScheme, policyv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	source := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "kruise-pods"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "pods.kruise.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9443/mutate-pod"), CABundle: []byte("ca")}}}}
	budget := &policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 4},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MaxUnavailable: ptr.To(intstr.FromInt32(1))}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(source, budget).Build()
	r := &Registrar{Target: registration.Target{Client: c, Live: c, Configuration: "kruise-podunavailablebudget-protection", Namespace: "kruise-system",
		Source: registration.Source{Configuration: "kruise-pods", Webhook: "pods.kruise.io"}}}
	marks := func() map[string]string {
		got := &policyv1alpha1.PodUnavailableBudget{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(budget), got); err != nil {
			t.Fatal(err)
		}
		return got.Annotations
	}
	if _, err := r.Reconcile(ctx, registration.One); err == nil {
		t.Fatal("no error without the configuration")
	}
	k := registrationmark.Entries
	if m := marks(); !strings.Contains(m[k.NotRegistered], "kruise-podunavailablebudget-protection is missing") || m[k.Registered] != "" {
		t.Errorf("without the configuration: marks %v", m)
	}
	if err := c.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: r.Configuration}}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the write, then the marks
		if _, err := r.Reconcile(ctx, registration.One); err != nil {
			t.Fatal(err)
		}
	}
	if m := marks(); m[k.Registered] != "4" || m[k.NotRegistered] != "" {
		t.Errorf("once written: marks %v", m)
	}
}
