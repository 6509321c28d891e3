package spreadplacement

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func serviceBase() admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{CABundle: []byte("ca"),
		Service: &admissionregistrationv1.ServiceReference{Namespace: "kruise-system", Name: "kruise-webhook-service", Path: ptr.To("/mutate-pod")}}
}

// Each spread gets a creation entry that fails closed and a deletion entry that fails open, both
// scoped to its pods and namespace; each namespace one eviction entry that fails open.
func TestEntries(t *testing.T) {
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	entries := Entries([]Spread{
		{Namespace: "ns-b", Name: "web", Pods: web},
		{Namespace: "ns-a", Name: "pending"}, // no workload yet: only the namespace's eviction entry
	}, serviceBase(), 0)
	var names []string
	byName := map[string]admissionregistrationv1.MutatingWebhook{}
	for _, e := range entries {
		names = append(names, e.Name)
		byName[e.Name] = e
	}
	want := []string{"ns-a.workloadspread-evictions.kruise.io", "ns-b.web.workloadspread-deletions.kruise.io",
		"ns-b.web.workloadspread.kruise.io", "ns-b.workloadspread-evictions.kruise.io"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("entries:\n got  %v\n want %v", names, want)
	}
	create := byName["ns-b.web.workloadspread.kruise.io"]
	if *create.FailurePolicy != admissionregistrationv1.Fail || create.Rules[0].Operations[0] != admissionregistrationv1.Create ||
		create.Rules[0].Resources[0] != "pods" || create.ObjectSelector.MatchLabels["app"] != "web" ||
		create.NamespaceSelector.MatchExpressions[0].Values[0] != "ns-b" || *create.ClientConfig.Service.Path != PathPrefix+"ns-b/web" ||
		len(create.MatchConditions) != 1 || *create.SideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun {
		t.Errorf("creation entry: %+v", create)
	}
	del := byName["ns-b.web.workloadspread-deletions.kruise.io"]
	if *del.FailurePolicy != admissionregistrationv1.Ignore || del.Rules[0].Operations[0] != admissionregistrationv1.Delete {
		t.Errorf("deletion entry: %+v", del)
	}
	evict := byName["ns-a.workloadspread-evictions.kruise.io"]
	if *evict.FailurePolicy != admissionregistrationv1.Ignore || evict.Rules[0].Resources[0] != "pods/eviction" ||
		*evict.ClientConfig.Service.Path != PathPrefix+"ns-a" {
		t.Errorf("eviction entry: %+v", evict)
	}
	// The entries are built with every field the API server defaults, so an unchanged registration
	// compares equal and is not rewritten.
	for _, e := range entries {
		if e.MatchPolicy == nil || e.TimeoutSeconds == nil || e.ReinvocationPolicy == nil || e.Rules[0].Scope == nil {
			t.Errorf("%s: a defaulted field is unset", e.Name)
		}
	}
}

func TestPodSelector(t *testing.T) {
	w := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	got := PodSelector(w, &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "a"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: metav1.LabelSelectorOpExists}}})
	if got.MatchLabels["app"] != "web" || got.MatchLabels["tier"] != "a" || len(got.MatchExpressions) != 1 || len(w.MatchLabels) != 1 {
		t.Errorf("ANDed: %+v (workload selector %+v)", got, w)
	}
	if got := PodSelector(w, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}); got != nil {
		t.Errorf("contradicting selectors: %+v, want nil", got)
	}
}

// The pods the Kruise pod webhook places are left out of the creation entry only (one webhook
// call per pod); deletions still reach the spread.
func TestEntriesLeavePodWebhookPods(t *testing.T) {
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	for _, e := range Entries([]Spread{{Namespace: "ns", Name: "web", Pods: web, PlacedByPodWebhook: "kruise.io/placed"}}, serviceBase(), 0) {
		var skips bool
		for _, r := range e.ObjectSelector.MatchExpressions {
			skips = skips || (r.Key == "kruise.io/placed" && r.Operator == metav1.LabelSelectorOpDoesNotExist)
		}
		if want := e.Name == EntryName("ns", "web"); skips != want {
			t.Errorf("%s: leaves the pod webhook's pods out: %v, want %v", e.Name, skips, want)
		}
	}
	if len(web.MatchExpressions) != 0 {
		t.Errorf("the spread's selector was modified: %+v", web)
	}
}
