package validating

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func distributionOf(resource string, mutate func(*v1alpha1.ResourceDistribution)) *v1alpha1.ResourceDistribution {
	d := &v1alpha1.ResourceDistribution{ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: v1alpha1.ResourceDistributionSpec{Resource: runtime.RawExtension{Raw: []byte(resource)}}}
	if mutate != nil {
		mutate(d)
	}
	return d
}

// Each invalid distribution is refused at its field's path.
func TestValidateResourceDistribution(t *testing.T) {
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`
	for _, tc := range []struct {
		name     string
		obj, old *v1alpha1.ResourceDistribution
		path     string // "" when valid
	}{
		{"a ConfigMap", distributionOf(cm, nil), nil, ""},
		{"a Service", distributionOf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}`, nil), nil, "spec.resource"},
		{"no name", distributionOf(`{"apiVersion":"v1","kind":"Secret","metadata":{}}`, nil), nil, "spec.resource"},
		{"a bad name", distributionOf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"Bad_Name"}}`, nil), nil, "spec.resource.metadata.name"},
		{"renamed", distributionOf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}`, nil), distributionOf(cm, nil), "spec.resource"},
		{"kind changed", distributionOf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c"}}`, nil), distributionOf(cm, nil), "spec.resource"},
		{"data changed", distributionOf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"w"}}`, nil), distributionOf(cm, nil), ""},
		{"a bad included namespace", distributionOf(cm, func(d *v1alpha1.ResourceDistribution) {
			d.Spec.Targets.IncludedNamespaces.List = []v1alpha1.ResourceDistributionNamespace{{Name: "ok"}, {Name: "Not_OK"}}
		}), nil, "spec.targets.includedNamespaces.list[1].name"},
		{"a bad selector", distributionOf(cm, func(d *v1alpha1.ResourceDistribution) {
			d.Spec.Targets.NamespaceLabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}
		}), nil, "spec.targets.namespaceLabelSelector.matchExpressions[0].operator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateResourceDistribution(tc.obj, tc.old)
			if tc.path == "" {
				if len(errs) > 0 {
					t.Errorf("refused: %v", errs)
				}
				return
			}
			if len(errs) == 0 || !strings.HasPrefix(errs[0].Field, tc.path) {
				t.Errorf("errors %v, want one at %s", errs, tc.path)
			}
		})
	}
}
