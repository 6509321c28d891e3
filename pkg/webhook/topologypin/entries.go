package topologypin

import (
	"fmt"
	"slices"
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// PathPrefix is where the entries call: PathPrefix + namespace + "/" + name of the
// PersistentPodState.
const PathPrefix = "/mutate-pod-persistentpodstate/"

// EntryOptions are what every entry shares.
type EntryOptions struct {
	// ClientConfig reaches the manager's webhook server; each entry gets it with its own path.
	ClientConfig admissionregistrationv1.WebhookClientConfig
	// ExcludedNamespaces never call the entries (the control plane's and Kruise's own).
	ExcludedNamespaces []string
	// TimeoutSeconds bounds one call (10 when 0).
	TimeoutSeconds int32
	// CustomWorkloads are the custom kinds a PersistentPodState may target besides StatefulSets
	// (workloadfinder.CustomWorkloads, workloadfinder.PersistentPodStateWhitelist).
	CustomWorkloads []schema.GroupKind
}

// Skip reasons of Entries.
const (
	SkipTarget   = "its targetRef is neither a StatefulSet (apps or apps.kruise.io) nor a whitelisted custom workload"
	SkipTopology = "it names no required or preferred topology"
	SkipExcluded = "its namespace is excluded from the pod webhooks"
	SkipDeleting = "it is being deleted"
)

// Entries returns one mutating entry per PersistentPodState that can inject a topology, sorted by
// name, and why the others got none (by namespace/name). Each entry:
//   - calls on the CREATE of pods in the PersistentPodState's namespace (namespaceSelector);
//   - is skipped by the API server (matchConditions) for a pod whose controller is not the
//     targetRef workload, or that some entry injected already;
//   - fails closed (failurePolicy Fail): a pod of the workload is refused while the manager cannot
//     be reached, never created away from its recorded topology.
func Entries(states []*v1alpha1.PersistentPodState, o EntryOptions) ([]admissionregistrationv1.MutatingWebhook, map[string]string) {
	skipped := map[string]string{}
	var out []admissionregistrationv1.MutatingWebhook
	for _, pps := range states {
		key := pps.Namespace + "/" + pps.Name
		gk, _ := workloadfinder.PodStateTarget(pps.Spec.TargetReference)
		ok, _ := workloadfinder.PodStateSupported(pps.Spec.TargetReference, o.CustomWorkloads)
		switch {
		case pps.DeletionTimestamp != nil:
			skipped[key] = SkipDeleting
		case !ok:
			skipped[key] = SkipTarget
		case pps.Spec.RequiredPersistentTopology == nil && len(pps.Spec.PreferredPersistentTopology) == 0:
			skipped[key] = SkipTopology
		case slices.Contains(o.ExcludedNamespaces, pps.Namespace):
			skipped[key] = SkipExcluded
		default:
			out = append(out, entry(pps, gk.Group, o))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, skipped
}

func entry(pps *v1alpha1.PersistentPodState, group string, o EntryOptions) admissionregistrationv1.MutatingWebhook {
	timeout := o.TimeoutSeconds
	if timeout == 0 {
		timeout = 10
	}
	return admissionregistrationv1.MutatingWebhook{
		Name:         EntryName(pps.Namespace, pps.Name),
		ClientConfig: registration.WithPath(o.ClientConfig, PathPrefix+pps.Namespace+"/"+pps.Name),
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
				Resources: []string{"pods"}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
		}},
		FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds:          &timeout,
		AdmissionReviewVersions: []string{"v1"},
		ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
		ObjectSelector:          &metav1.LabelSelector{},
		NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{pps.Namespace}}}},
		MatchConditions: []admissionregistrationv1.MatchCondition{
			{Name: "controlled-by-target", Expression: controlledByExpression(group, pps.Spec.TargetReference.Kind, pps.Spec.TargetReference.Name)},
			{Name: "not-injected-yet", Expression: fmt.Sprintf("!has(object.metadata.annotations) || !(%q in object.metadata.annotations)", InjectedAnnotation)},
		},
	}
}

// controlledByExpression is true for a pod whose controller is the workload of group, kind and
// name (any version; the core group's apiVersion is the bare version).
func controlledByExpression(group, kind, name string) string {
	version := fmt.Sprintf("r.apiVersion.startsWith(%q)", group+"/")
	if group == "" {
		version = `!r.apiVersion.contains("/")`
	}
	return fmt.Sprintf("has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, "+
		"has(r.controller) && r.controller && r.kind == %q && r.name == %q && %s)", kind, name, version)
}

// EntryName names a PersistentPodState's entry (the API server quotes it when Kruise cannot be
// reached): <namespace>.<name>.persistentpodstate.kruise.io, or a hash when longer than a webhook
// name may be.
func EntryName(namespace, name string) string {
	return registration.Name(namespace+"."+name, ".persistentpodstate.kruise.io")
}
