package spreadplacement

import (
	"fmt"
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// PathPrefix is where the entries call: PathPrefix + namespace + "/" + name for a spread's pods,
// PathPrefix + namespace for evictions.
const PathPrefix = "/mutate-pod-workloadspread/"

// Spread is one WorkloadSpread as the entries need it.
type Spread struct {
	Namespace, Name string
	// Pods selects the pods it spreads (nil: none known yet, e.g. its workload does not exist).
	Pods *metav1.LabelSelector
	// PlacedByPodWebhook, when set, is the label of the pods the Kruise pod webhook calls for and
	// places (Handler.PlaceAny): the creation entry leaves them out, so that each costs one
	// webhook call, not two.
	PlacedByPodWebhook string
	// TargetMissing says its targetRef workload is not found (yet): its entries then cover every
	// pod of its namespace and fail open, so that the pods of a workload created with the spread
	// reach Kruise before the entries narrow to the workload's selector (Handler places only the
	// workload's pods).
	TargetMissing bool
}

// Entries returns the webhook entries for spreads, sorted by name: a creation entry (fails
// closed; open while the target is missing) and a deletion entry (fails open) per spread that
// selects pods or whose target is missing, and an eviction entry (fails open) per namespace with
// a spread.
func Entries(spreads []Spread, base admissionregistrationv1.WebhookClientConfig, timeout int32) []admissionregistrationv1.MutatingWebhook {
	if timeout == 0 {
		timeout = 10
	}
	var out []admissionregistrationv1.MutatingWebhook
	namespaces := map[string]bool{}
	for _, s := range spreads {
		namespaces[s.Namespace] = true
		pods, fail := s.Pods, admissionregistrationv1.Fail
		if pods == nil {
			if !s.TargetMissing {
				continue
			}
			pods, fail = &metav1.LabelSelector{}, admissionregistrationv1.Ignore
		}
		path := PathPrefix + s.Namespace + "/" + s.Name
		created := pods
		if s.PlacedByPodWebhook != "" {
			created = created.DeepCopy()
			created.MatchExpressions = append(created.MatchExpressions,
				metav1.LabelSelectorRequirement{Key: s.PlacedByPodWebhook, Operator: metav1.LabelSelectorOpDoesNotExist})
		}
		create := entry(EntryName(s.Namespace, s.Name), entryOptions{base: base, path: path, op: admissionregistrationv1.Create,
			resource: "pods", fail: fail, ns: s.Namespace, pods: created, timeout: timeout})
		create.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "not-placed-yet", Expression: notPlacedExpression}}
		deletion := entry(DeletionEntryName(s.Namespace, s.Name), entryOptions{base: base, path: path, op: admissionregistrationv1.Delete,
			resource: "pods", fail: admissionregistrationv1.Ignore, ns: s.Namespace, pods: pods, timeout: timeout})
		out = append(out, create, deletion)
	}
	for ns := range namespaces {
		out = append(out, entry(EvictionEntryName(ns), entryOptions{base: base, path: PathPrefix + ns, op: admissionregistrationv1.Create,
			resource: "pods/eviction", fail: admissionregistrationv1.Ignore, ns: ns, timeout: timeout}))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// entryOptions are what one entry needs besides its name.
type entryOptions struct {
	base     admissionregistrationv1.WebhookClientConfig
	path     string
	op       admissionregistrationv1.OperationType
	resource string
	fail     admissionregistrationv1.FailurePolicyType
	ns       string
	pods     *metav1.LabelSelector
	timeout  int32
}

func entry(name string, o entryOptions) admissionregistrationv1.MutatingWebhook {
	obj := &metav1.LabelSelector{}
	if o.pods != nil {
		obj = o.pods.DeepCopy()
	}
	return admissionregistrationv1.MutatingWebhook{
		Name: name, ClientConfig: registration.WithPath(o.base, o.path),
		Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{o.op},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{o.resource},
				Scope: ptr.To(admissionregistrationv1.NamespacedScope)}}},
		FailurePolicy: ptr.To(o.fail), MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
		// Handler skips the status write of a dry-run request.
		SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNoneOnDryRun), TimeoutSeconds: ptr.To(o.timeout),
		AdmissionReviewVersions: []string{"v1"}, ObjectSelector: obj,
		NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{o.ns}}}},
		ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
	}
}

// notPlacedExpression is true for a pod without the matched-workloadspread annotation.
var notPlacedExpression = fmt.Sprintf("!has(object.metadata.annotations) || !(%q in object.metadata.annotations)", spreadrules.MatchedAnnotation)

// EntryName names a spread's creation entry (the API server quotes it when Kruise cannot be
// reached, so the user learns which spread refused the pod).
func EntryName(namespace, name string) string {
	return registration.Name(namespace+"."+name, ".workloadspread.kruise.io")
}

// DeletionEntryName names a spread's deletion entry.
func DeletionEntryName(namespace, name string) string {
	return registration.Name(namespace+"."+name, ".workloadspread-deletions.kruise.io")
}

// EvictionEntryName names the eviction entry of a namespace.
func EvictionEntryName(namespace string) string {
	return registration.Name(namespace, ".workloadspread-evictions.kruise.io")
}

// PodSelector is the selector of the pods a spread places: its workload's selector ANDed with
// its targetFilter's; nil when the two require different values of one label (no pod).
func PodSelector(workload, filter *metav1.LabelSelector) *metav1.LabelSelector {
	out := &metav1.LabelSelector{}
	if workload != nil {
		out = workload.DeepCopy()
	}
	if filter == nil {
		return out
	}
	for k, v := range filter.MatchLabels {
		if have, ok := out.MatchLabels[k]; ok && have != v {
			return nil
		}
		if out.MatchLabels == nil {
			out.MatchLabels = map[string]string{}
		}
		out.MatchLabels[k] = v
	}
	for _, r := range filter.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, *r.DeepCopy())
	}
	return out
}
