package compat

import (
	"path/filepath"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kruise-ng/kruise/test/harness"
)

// The comparator itself must see what a client would see: identical CRDs have no difference, and
// each kind of wire-visible change is reported at its path.
func TestDiffReportsWireVisibleChanges(t *testing.T) {
	theirs, err := ReadCRD(filepath.Join(OracleDir(harness.RepoRoot()), "crds", "apps.kruise.io_clonesets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(theirs, theirs); len(d) != 0 {
		t.Fatalf("a CRD differs from itself: %v", d)
	}
	mutations := map[string]func(*apiextv1.CustomResourceDefinition){
		"spec.names.shortNames": func(c *apiextv1.CustomResourceDefinition) { c.Spec.Names.ShortNames = nil },
		"spec.schema.properties.spec.properties.replicas.format": func(c *apiextv1.CustomResourceDefinition) {
			p := spec(c).Properties["replicas"]
			p.Format = "int64"
			spec(c).Properties["replicas"] = p
		},
		".minReadySeconds: field missing": func(c *apiextv1.CustomResourceDefinition) { delete(spec(c).Properties, "minReadySeconds") },
		".extra: field not in the oracle": func(c *apiextv1.CustomResourceDefinition) {
			spec(c).Properties["extra"] = apiextv1.JSONSchemaProps{Type: "string"}
		},
		".required": func(c *apiextv1.CustomResourceDefinition) {
			root := c.Spec.Versions[0].Schema.OpenAPIV3Schema
			s := root.Properties["spec"]
			s.Required = []string{"selector"}
			root.Properties["spec"] = s
		},
		"additionalPrinterColumns": func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Versions[0].AdditionalPrinterColumns[0].JSONPath = ".spec.other"
		},
		"subresources": func(c *apiextv1.CustomResourceDefinition) { c.Spec.Versions[0].Subresources.Scale = nil },
	}
	for want, mutate := range mutations {
		ours := theirs.DeepCopy()
		mutate(ours)
		d := strings.Join(Diff(ours, theirs), "\n")
		if !strings.Contains(d, strings.TrimPrefix(want, "spec.schema.properties.spec.properties.")) {
			t.Errorf("mutation %q not reported; diff:\n%s", want, d)
		}
	}
	// Descriptions are documentation in our own words: never a difference.
	ours := theirs.DeepCopy()
	p := spec(ours).Properties["replicas"]
	p.Description = "our words"
	spec(ours).Properties["replicas"] = p
	if d := Diff(ours, theirs); len(d) != 0 {
		t.Errorf("a description change was reported: %v", d)
	}
}

// spec returns the spec schema; its Properties map is shared with the CRD, so edits to it stick.
func spec(c *apiextv1.CustomResourceDefinition) *apiextv1.JSONSchemaProps {
	s := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	return &s
}
