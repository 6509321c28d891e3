package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/manager"
	"github.com/kruise-ng/kruise/pkg/webhook/podmutation"
	"github.com/kruise-ng/kruise/test/harness"
)

func gates(p *corev1.Pod) []corev1.PodConditionType {
	var out []corev1.PodConditionType
	for _, g := range p.Spec.ReadinessGates {
		out = append(out, g.ConditionType)
	}
	return out
}

// checkPodWebhook: the pod webhook adds KruisePodReady to pods of a CloneSet only, it is scoped
// (object and namespace selectors, failure policy) so other pods never call it, and the condition
// is opened by the CloneSet's creation write or, for a pod it did not create, by the controller.
func checkPodWebhook(t *testing.T, c client.Client, ns string, cs *appsv1alpha1.CloneSet) {
	ctx := context.Background()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: manager.MutatingWebhookConfiguration}, cfg); err != nil {
		t.Fatal(err)
	}
	var hook *admissionregistrationv1.MutatingWebhook
	for i := range cfg.Webhooks {
		if cfg.Webhooks[i].Name == podmutation.WebhookName {
			hook = &cfg.Webhooks[i]
		}
	}
	if hook == nil {
		t.Fatalf("no webhook %s in %s", podmutation.WebhookName, cfg.Name)
	}
	if hook.ObjectSelector == nil || len(hook.ObjectSelector.MatchExpressions) == 0 ||
		hook.ObjectSelector.MatchExpressions[0].Key != appsv1alpha1.CloneSetInstanceIDLabelKey ||
		hook.NamespaceSelector == nil || len(hook.NamespaceSelector.MatchExpressions) == 0 ||
		!slices.Contains(hook.NamespaceSelector.MatchExpressions[0].Values, metav1.NamespaceSystem) ||
		hook.FailurePolicy == nil || *hook.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("pod webhook not scoped: objectSelector %v namespaceSelector %v failurePolicy %v",
			hook.ObjectSelector, hook.NamespaceSelector, hook.FailurePolicy)
	}

	// The CloneSet's own pod: both gates, both conditions True from its creation write.
	harness.Eventually(t, 30*time.Second, "the CloneSet's pod with both gates open", func() (bool, string) {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(ns), client.HasLabels{appsv1alpha1.CloneSetInstanceIDLabelKey}); err != nil {
			return false, err.Error()
		}
		for _, p := range pods.Items {
			if metav1.IsControlledBy(&p, cs) {
				ok := slices.Contains(gates(&p), appspub.KruisePodReadyConditionType) && slices.Contains(gates(&p), appspub.InPlaceUpdateReady) &&
					harness.PodCondition(&p, appspub.KruisePodReadyConditionType) == corev1.ConditionTrue &&
					harness.PodCondition(&p, appspub.InPlaceUpdateReady) == corev1.ConditionTrue
				return ok, harness.DescribePod(&p) + fmt.Sprintf(" gates=%v", gates(&p))
			}
		}
		return false, "no pod of the CloneSet yet"
	})

	owner := *metav1.NewControllerRef(cs, appsv1alpha1.GroupVersion.WithKind("CloneSet"))
	label := map[string]string{appsv1alpha1.CloneSetInstanceIDLabelKey: "manual"}
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}}
	for _, tc := range []struct {
		name     string
		ns       string
		labels   map[string]string
		owners   []metav1.OwnerReference
		wantGate bool
	}{
		{"owned-labelled", ns, label, []metav1.OwnerReference{owner}, true},
		{"unowned-labelled", ns, label, nil, false},
		{"owned-unlabelled", ns, nil, []metav1.OwnerReference{owner}, false},
		// Owned and labelled like a CloneSet's pod: only the namespace selector keeps the webhook away.
		{"system-owned-labelled", metav1.NamespaceSystem, label, []metav1.OwnerReference{owner}, false},
	} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gate-" + tc.name, Namespace: tc.ns, Labels: tc.labels, OwnerReferences: tc.owners}, Spec: spec}
		if err := c.Create(ctx, p); err != nil {
			t.Fatalf("create pod %s: %v", p.Name, err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), p) })
		if got := slices.Contains(gates(p), appspub.KruisePodReadyConditionType); got != tc.wantGate {
			t.Errorf("pod %s: KruisePodReady gate %v, want %v (gates %v)", p.Name, got, tc.wantGate, gates(p))
		}
	}
	// A gated pod the CloneSet did not create: the controller opens the gate after the owner's grace.
	harness.Eventually(t, 30*time.Second, "KruisePodReady opened on a pod the CloneSet did not create", func() (bool, string) {
		p := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gate-owned-labelled"}, p); err != nil {
			return false, err.Error()
		}
		return harness.PodCondition(p, appspub.KruisePodReadyConditionType) == corev1.ConditionTrue, harness.DescribePod(p)
	})
}
