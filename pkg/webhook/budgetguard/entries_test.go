package budgetguard

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func serviceBase() admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{CABundle: []byte("ca"),
		Service: &admissionregistrationv1.ServiceReference{Namespace: "kruise-system", Name: "kruise-webhook-service", Path: ptr.To("/mutate-pod")}}
}

func TestEntries(t *testing.T) {
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	db := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"db"}}}}
	base := serviceBase()
	budgets := []Budget{
		{Namespace: "ns-b", Name: "web", Pods: web},
		{Namespace: "ns-a", Name: "db", Pods: db},
		{Namespace: "ns-a", Name: "gone", Pods: nil}, // its workload does not exist: no entry of its own
		{Namespace: "ns-c", Name: "gone", Pods: nil}, // the namespace still gets its eviction entry
	}
	entries := Entries(budgets, base, 0)

	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	want := []string{"ns-a.db.podunavailablebudget.kruise.io", "ns-a.podunavailablebudget-evictions.kruise.io",
		"ns-b.podunavailablebudget-evictions.kruise.io", "ns-b.web.podunavailablebudget.kruise.io",
		"ns-c.podunavailablebudget-evictions.kruise.io"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("entries:\n got  %v\n want %v", names, want)
	}

	inNamespace := func(ns string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{ns}}}}
	}
	rules := func(resources []string, ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: resources, Scope: ptr.To(admissionregistrationv1.NamespacedScope)}}}
	}
	entry := func(name, path string, r []admissionregistrationv1.RuleWithOperations, ns string, pods *metav1.LabelSelector) admissionregistrationv1.ValidatingWebhook {
		cfg := serviceBase()
		cfg.Service.Path = ptr.To(path)
		return admissionregistrationv1.ValidatingWebhook{Name: name, ClientConfig: cfg, Rules: r,
			FailurePolicy: ptr.To(admissionregistrationv1.Fail), MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), TimeoutSeconds: ptr.To[int32](10),
			AdmissionReviewVersions: []string{"v1"}, ObjectSelector: pods, NamespaceSelector: inNamespace(ns)}
	}
	podRules := rules([]string{"pods", "pods/resize"}, admissionregistrationv1.Delete, admissionregistrationv1.Update)
	evictionRules := rules([]string{"pods/eviction"}, admissionregistrationv1.Create)
	wantEntries := []admissionregistrationv1.ValidatingWebhook{
		entry(want[0], "/validate-pod-budget/ns-a/db", podRules, "ns-a", db),
		entry(want[1], "/validate-pod-budget/ns-a", evictionRules, "ns-a", &metav1.LabelSelector{}),
		entry(want[2], "/validate-pod-budget/ns-b", evictionRules, "ns-b", &metav1.LabelSelector{}),
		entry(want[3], "/validate-pod-budget/ns-b/web", podRules, "ns-b", web),
		entry(want[4], "/validate-pod-budget/ns-c", evictionRules, "ns-c", &metav1.LabelSelector{}),
	}
	for i := range wantEntries {
		if !equality.Semantic.DeepEqual(entries[i], wantEntries[i]) {
			t.Errorf("entry %s:\n got  %+v\n want %+v", want[i], entries[i], wantEntries[i])
		}
		// An eviction's admission object (the Eviction) has no labels: only an empty object selector
		// lets the API server call the entry.
		if sel := entries[i].ObjectSelector; sel == nil {
			t.Errorf("entry %s has no object selector", want[i])
		}
	}

	// The entries own their selectors and client configs: changing the budgets or base afterwards,
	// or one entry, changes nothing else.
	web.MatchLabels["app"] = "changed"
	*base.Service.Path = "/changed"
	entries[0].ClientConfig.Service.Name = "changed"
	if entries[3].ObjectSelector.MatchLabels["app"] != "web" || *entries[3].ClientConfig.Service.Path != "/validate-pod-budget/ns-b/web" ||
		entries[1].ClientConfig.Service.Name != "kruise-webhook-service" {
		t.Errorf("entries share state with their inputs: %+v", entries)
	}
}

func TestEntriesTimeoutAndURL(t *testing.T) {
	base := admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://kruise.example.com:9443/mutate-pod")}
	entries := Entries([]Budget{{Namespace: "ns", Name: "web", Pods: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}}, base, 5)
	if len(entries) != 2 {
		t.Fatalf("%d entries, want 2", len(entries))
	}
	for _, e := range entries {
		if *e.TimeoutSeconds != 5 {
			t.Errorf("%s: timeout %d, want 5", e.Name, *e.TimeoutSeconds)
		}
	}
	if got := *entries[0].ClientConfig.URL; got != "https://kruise.example.com:9443/validate-pod-budget/ns" {
		t.Errorf("eviction entry URL %s", got)
	}
	if got := *entries[1].ClientConfig.URL; got != "https://kruise.example.com:9443/validate-pod-budget/ns/web" {
		t.Errorf("budget entry URL %s", got)
	}
	if len(Entries(nil, base, 0)) != 0 {
		t.Error("entries without budgets")
	}
}

// Names stay valid webhook names (at most 253 characters) and distinct for the longest namespaces
// and budget names.
func TestEntryNames(t *testing.T) {
	ns := strings.Repeat("n", 63)
	a, b := strings.Repeat("a", 253), strings.Repeat("a", 252)+"b"
	names := map[string]bool{}
	for _, n := range []string{EntryName(ns, a), EntryName(ns, b), EvictionEntryName(ns), EntryName("ns", "web"), EvictionEntryName("ns")} {
		if len(n) > 253 {
			t.Errorf("name of %d characters: %s", len(n), n)
		}
		if !strings.HasSuffix(n, ".podunavailablebudget.kruise.io") && !strings.HasSuffix(n, ".podunavailablebudget-evictions.kruise.io") {
			t.Errorf("name %s", n)
		}
		if names[n] {
			t.Errorf("name %s twice", n)
		}
		names[n] = true
	}
	if EntryName("ns", "web") != "ns.web.podunavailablebudget.kruise.io" || EvictionEntryName("ns") != "ns.podunavailablebudget-evictions.kruise.io" {
		t.Errorf("names %s, %s", EntryName("ns", "web"), EvictionEntryName("ns"))
	}
	if first, again := EntryName(ns, a), EntryName(ns, strings.Clone(a)); first != again {
		t.Errorf("a hashed name is not stable: %s, then %s", first, again)
	}
}

// A budget may be named "evictions": its entry must not take the name of its namespace's eviction
// entry (the API server refuses a configuration with two webhooks of one name, and then no budget
// is enforced).
func TestEntryNameOfABudgetNamedEvictions(t *testing.T) {
	if EntryName("ns", "evictions") == EvictionEntryName("ns") {
		t.Errorf("budget ns/evictions and the eviction entry of ns are both named %s", EvictionEntryName("ns"))
	}
	entries := Entries([]Budget{{Namespace: "ns", Name: "evictions", Pods: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}},
		serviceBase(), 0)
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Name] {
			t.Errorf("two entries named %s", e.Name)
		}
		seen[e.Name] = true
	}
}
