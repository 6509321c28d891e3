package budgetguard

import (
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// PathPrefix is where the entries call: PathPrefix + namespace for evictions, PathPrefix +
// namespace + "/" + name for a budget's pods.
const PathPrefix = "/validate-pod-budget/"

// Budget is one budget as the entries need it.
type Budget struct {
	Namespace, Name string
	// Pods selects the pods it guards (nil: none, no entry).
	Pods *metav1.LabelSelector
	// TargetMissing says its targetRef workload is not found (yet): its entry then covers every
	// pod of its namespace and fails open, so that the pods of a workload created with the budget
	// reach Kruise before the entry narrows to the workload's selector (Handler guards only them).
	TargetMissing bool
}

// Entries returns the validating entries for budgets, sorted by name: one per budget that selects
// pods (or whose target workload is missing), one per namespace with a budget for evictions.
func Entries(budgets []Budget, base admissionregistrationv1.WebhookClientConfig, timeout int32) []admissionregistrationv1.ValidatingWebhook {
	if timeout == 0 {
		timeout = 10
	}
	entry := func(name, path string, rules []admissionregistrationv1.RuleWithOperations, ns string, pods *metav1.LabelSelector, open bool) admissionregistrationv1.ValidatingWebhook {
		fail := admissionregistrationv1.Fail
		if open {
			fail = admissionregistrationv1.Ignore
		}
		none := admissionregistrationv1.SideEffectClassNone
		equivalent := admissionregistrationv1.Equivalent
		obj := &metav1.LabelSelector{}
		if pods != nil {
			obj = pods.DeepCopy()
		}
		return admissionregistrationv1.ValidatingWebhook{
			Name: name, ClientConfig: registration.WithPath(base, path), Rules: rules,
			FailurePolicy: &fail, MatchPolicy: &equivalent, SideEffects: &none, TimeoutSeconds: ptr.To(timeout),
			AdmissionReviewVersions: []string{"v1"}, ObjectSelector: obj,
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{ns}}}},
		}
	}
	rule := func(ops []admissionregistrationv1.OperationType, resources ...string) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: resources, Scope: ptr.To(admissionregistrationv1.NamespacedScope)}}}
	}
	var out []admissionregistrationv1.ValidatingWebhook
	namespaces := map[string]bool{}
	for _, b := range budgets {
		namespaces[b.Namespace] = true
		if b.Pods == nil && !b.TargetMissing {
			continue
		}
		out = append(out, entry(EntryName(b.Namespace, b.Name), PathPrefix+b.Namespace+"/"+b.Name,
			rule([]admissionregistrationv1.OperationType{admissionregistrationv1.Delete, admissionregistrationv1.Update}, "pods", "pods/resize"),
			b.Namespace, b.Pods, b.Pods == nil))
	}
	for ns := range namespaces {
		out = append(out, entry(EvictionEntryName(ns), PathPrefix+ns,
			rule([]admissionregistrationv1.OperationType{admissionregistrationv1.Create}, "pods/eviction"), ns, nil, false))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// EntryName names a budget's entry (the API server quotes it when Kruise cannot be reached).
func EntryName(namespace, name string) string {
	return registration.Name(namespace+"."+name, ".podunavailablebudget.kruise.io")
}

// EvictionEntryName names the eviction entry of a namespace.
func EvictionEntryName(namespace string) string {
	// Its own suffix: a budget may be named "evictions".
	return registration.Name(namespace, ".podunavailablebudget-evictions.kruise.io")
}
