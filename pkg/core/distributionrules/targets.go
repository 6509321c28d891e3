package distributionrules

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Ignored are the namespaces no distribution ever targets.
var Ignored = sets.New(metav1.NamespaceSystem, metav1.NamespacePublic)

// Targets splits namespaces into the distribution's targets and the others, each sorted: every
// namespace when allNamespaces, else those matching namespaceLabelSelector (when it has a term);
// plus includedNamespaces (listed even when they do not exist); minus excludedNamespaces and the
// Ignored ones.
func Targets(t appsv1alpha1.ResourceDistributionTargets, namespaces []corev1.Namespace) (targets, others []string, err error) {
	var selector labels.Selector
	if !t.AllNamespaces && (len(t.NamespaceLabelSelector.MatchLabels) > 0 || len(t.NamespaceLabelSelector.MatchExpressions) > 0) {
		if selector, err = metav1.LabelSelectorAsSelector(&t.NamespaceLabelSelector); err != nil {
			return nil, nil, fmt.Errorf("spec.targets.namespaceLabelSelector: %w", err)
		}
	}
	want := sets.New[string]()
	for _, ns := range namespaces {
		if t.AllNamespaces || (selector != nil && selector.Matches(labels.Set(ns.Labels))) {
			want.Insert(ns.Name)
		}
	}
	for _, ns := range t.IncludedNamespaces.List {
		want.Insert(ns.Name)
	}
	for _, ns := range t.ExcludedNamespaces.List {
		want.Delete(ns.Name)
	}
	want = want.Difference(Ignored)
	for _, ns := range namespaces {
		if !want.Has(ns.Name) {
			others = append(others, ns.Name)
		}
	}
	slices.Sort(others)
	return sets.List(want), others, nil
}
