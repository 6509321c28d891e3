package install

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kruise-ng/kruise/pkg/webhook/budgetguard"
	"github.com/kruise-ng/kruise/pkg/webhook/sidecarinjection"
	"github.com/kruise-ng/kruise/pkg/webhook/spreadplacement"
	"github.com/kruise-ng/kruise/pkg/webhook/topologypin"
)

// The declared pipeline is what the API server runs: in its calling order, each static webhook
// in its configuration in that order, each per-object configuration installed, its entries named
// as the registrar names them.
func TestPodPipelineIsTheInstalledOrder(t *testing.T) {
	if !podPipelineInOrder(PodPipeline) {
		t.Fatal("PodPipeline is not in the API server's calling order (mutating first, configurations by name)")
	}
	reversed := slices.Clone(PodPipeline)
	slices.Reverse(reversed)
	if podPipelineInOrder(reversed) {
		t.Fatal("a reversed pipeline counts as ordered")
	}
	objs, err := Objects(Options{Namespace: "kruise-system", WebhookService: "kruise-webhook-service",
		Subject: rbacv1.Subject{Kind: "ServiceAccount", Name: "kruise-manager", Namespace: "kruise-system"}})
	if err != nil {
		t.Fatal(err)
	}
	webhooks := map[string][]string{} // configuration → its webhooks' names, in order
	for _, u := range objs {
		if k := u.GetKind(); k != "MutatingWebhookConfiguration" && k != "ValidatingWebhookConfiguration" {
			continue
		}
		list, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		names := []string{}
		for _, w := range list {
			names = append(names, w.(map[string]any)["name"].(string))
		}
		webhooks[u.GetName()] = names
	}
	perObject := map[string]string{
		PersistentPodStateConfiguration: topologypin.EntryName("<namespace>", "<name>"),
		SidecarInjectionConfiguration:   sidecarinjection.EntryName("<name>"),
		WorkloadSpreadConfiguration:     spreadplacement.EntryName("<namespace>", "<name>"),
		BudgetProtectionConfiguration:   budgetguard.EntryName("<namespace>", "<name>"),
	}
	last := map[string]int{}
	for _, s := range PodPipeline {
		names, ok := webhooks[s.Configuration]
		if !ok {
			t.Errorf("%s: configuration %s is not installed", s.Webhook, s.Configuration)
			continue
		}
		if s.PerObject {
			if want := perObject[s.Configuration]; s.Webhook != want {
				t.Errorf("%s: the registrar names its entries %s", s.Webhook, want)
			}
			continue
		}
		i := slices.Index(names, s.Webhook)
		if i < 0 || i < last[s.Configuration] {
			t.Errorf("%s: at %d of %s's webhooks %v, want after the steps before it", s.Webhook, i, s.Configuration, names)
		}
		last[s.Configuration] = i
	}
}
