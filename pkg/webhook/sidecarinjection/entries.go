package sidecarinjection

import (
	"fmt"
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// EntryOptions are what every injection entry shares.
type EntryOptions struct {
	// ClientConfig reaches the manager's webhook server (CA bundle and Service or URL); each entry
	// gets it with its own path (PathPrefix + the SidecarSet's name).
	ClientConfig admissionregistrationv1.WebhookClientConfig
	// ExcludedNamespaces never call the entries (the control plane's and Kruise's own).
	ExcludedNamespaces []string
	// TimeoutSeconds bounds one call (10 when 0).
	TimeoutSeconds int32
}

// Entries returns the webhook entries that make the API server call Kruise for exactly the pods
// the SidecarSets select at creation, one per SidecarSet whose injection is not paused and whose
// selectors are valid, sorted by name. Each entry:
//   - selects pods by the SidecarSet's selector (objectSelector) and its namespaces by its
//     namespaceSelector and v1alpha1 namespace, minus the excluded namespaces (namespaceSelector);
//   - fails closed (failurePolicy Fail): a pod that must get a sidecar is refused while the
//     manager cannot be reached, never created without it;
//   - has no matchConditions: a pod's annotations are its author's, so none may skip a call.
//
// Entries reports, by SidecarSet name, why a SidecarSet got no entry.
func Entries(sets []*v1beta1.SidecarSet, o EntryOptions) ([]admissionregistrationv1.MutatingWebhook, map[string]string) {
	skipped := map[string]string{}
	var out []admissionregistrationv1.MutatingWebhook
	for _, s := range sets {
		w, why := entry(s, o)
		if w == nil {
			skipped[s.Name] = why
			continue
		}
		out = append(out, *w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, skipped
}

// Skip reasons of Entries.
const (
	SkipPaused   = "injection is paused (spec.injectionStrategy.paused)"
	SkipSelector = "it selects no pod (spec.selector is empty or invalid)"
)

func entry(s *v1beta1.SidecarSet, o EntryOptions) (*admissionregistrationv1.MutatingWebhook, string) {
	if s.Spec.InjectionStrategy.Paused {
		return nil, SkipPaused
	}
	sel := s.Spec.Selector
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return nil, SkipSelector
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		return nil, SkipSelector
	}
	nsSel, err := namespaceSelector(s, o.ExcludedNamespaces)
	if err != nil {
		return nil, err.Error()
	}
	timeout := o.TimeoutSeconds
	if timeout == 0 {
		timeout = 10
	}
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	equivalent := admissionregistrationv1.Equivalent
	never := admissionregistrationv1.NeverReinvocationPolicy
	return &admissionregistrationv1.MutatingWebhook{
		Name:         EntryName(s.Name),
		ClientConfig: registration.WithPath(o.ClientConfig, PathPrefix+s.Name),
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
				Resources: []string{"pods"}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
		}},
		FailurePolicy:           &fail,
		MatchPolicy:             &equivalent,
		NamespaceSelector:       nsSel,
		ObjectSelector:          sel.DeepCopy(),
		SideEffects:             &none,
		TimeoutSeconds:          &timeout,
		AdmissionReviewVersions: []string{"v1"},
		ReinvocationPolicy:      &never,
	}, ""
}

// namespaceSelector is the SidecarSet's namespaceSelector, narrowed to its v1alpha1 namespace and
// away from the excluded namespaces.
func namespaceSelector(s *v1beta1.SidecarSet, excluded []string) (*metav1.LabelSelector, error) {
	out := &metav1.LabelSelector{}
	if s.Spec.NamespaceSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(s.Spec.NamespaceSelector); err != nil {
			return nil, fmt.Errorf("spec.namespaceSelector is invalid: %w", err)
		}
		out = s.Spec.NamespaceSelector.DeepCopy()
	}
	only, err := sidecarrules.OnlyNamespace(s)
	if err != nil {
		return nil, err
	}
	if only != "" {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{only}})
	}
	if len(excluded) > 0 {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: append([]string(nil), excluded...)})
	}
	return out, nil
}

// EntryName names a SidecarSet's entry: <name>.sidecarset.kruise.io, or a hash of the name when
// that would be longer than a webhook name may be. The API server quotes it when a call fails, so
// the user learns which SidecarSet refused the pod.
func EntryName(set string) string { return registration.Name(set, ".sidecarset.kruise.io") }
