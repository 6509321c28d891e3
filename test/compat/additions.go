package compat

import (
	"fmt"
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Addition is a wire-visible field or printer column Kruise adds to a CRD of the oracle, on
// purpose: OpenKruise's CRD prunes the field and never writes it, so a cluster moves back and
// forth with nothing lost but what the addition reports. Each is documented where its kind is.
type Addition struct {
	// StatusFields are properties of .status; Columns name printer columns; both in every version.
	StatusFields, Columns []string
	// Why says what the addition is for and where it is documented.
	Why string
}

// Additions are Kruise's additions by CRD file name.
var Additions = map[string]Addition{
	"apps.kruise.io_sidecarsets.yaml": {
		StatusFields: []string{"conditions", "notInjectedPods"},
		Columns:      []string{"REGISTERED", "NOT-INJECTED"},
		Why: "issue 39: whether the API server sends the pods a SidecarSet selects to Kruise (condition InjectionRegistered), " +
			"and how many it selects run without its sidecars (docs/sidecarset.md)",
	},
	"policy.kruise.io_podunavailablebudgets.yaml": {
		StatusFields: []string{"conditions"},
		Columns:      []string{"Registered"},
		Why: "issue 33: whether the API server sends the disruptions of the pods a budget guards to Kruise " +
			"(condition ProtectionRegistered; docs/podunavailablebudget.md)",
	},
	"apps.kruise.io_workloadspreads.yaml": {
		StatusFields: []string{"conditions"},
		Columns:      []string{"Registered"},
		Why: "issue 33: whether the API server sends the creations of the pods a spread places to Kruise " +
			"(condition PlacementRegistered; docs/workloadspread.md)",
	},
	"apps.kruise.io_persistentpodstates.yaml": {
		StatusFields: []string{"conditions"},
		// Age: a CRD with printer columns shows only those, and OpenKruise's (none) shows the age.
		Columns: []string{"Registered", "Age"},
		Why: "issue 33: whether the API server sends the creations of the pods a PersistentPodState keeps to Kruise " +
			"(condition InjectionRegistered; docs/persistentpodstate.md)",
	},
}

// WithoutAdditions returns ours without the additions a, or an error naming an addition ours
// does not have (the list must stay true).
func WithoutAdditions(ours *apiextv1.CustomResourceDefinition, a Addition) (*apiextv1.CustomResourceDefinition, error) {
	out := ours.DeepCopy()
	for i := range out.Spec.Versions {
		v := &out.Spec.Versions[i]
		for _, col := range a.Columns {
			n := len(v.AdditionalPrinterColumns)
			v.AdditionalPrinterColumns = slices.DeleteFunc(v.AdditionalPrinterColumns, func(c apiextv1.CustomResourceColumnDefinition) bool { return c.Name == col })
			if len(v.AdditionalPrinterColumns) == n {
				return nil, fmt.Errorf("version %s has no printer column %s", v.Name, col)
			}
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		status, ok := v.Schema.OpenAPIV3Schema.Properties["status"]
		if !ok {
			return nil, fmt.Errorf("version %s has no status", v.Name)
		}
		for _, f := range a.StatusFields {
			if _, ok := status.Properties[f]; !ok {
				return nil, fmt.Errorf("version %s has no status.%s", v.Name, f)
			}
			delete(status.Properties, f)
		}
		v.Schema.OpenAPIV3Schema.Properties["status"] = status
	}
	return out, nil
}
