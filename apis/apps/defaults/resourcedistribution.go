package defaults

import "github.com/kruise-ng/kruise/apis/apps/v1alpha1"

// SetDefaultsResourceDistribution applies no defaults: neither the oracle
// (apps.kruise.io_resourcedistributions.yaml) nor the user manual documents
// a default for any ResourceDistribution spec field. It exists so that the
// webhook has a defaulting entry point for every kind.
func SetDefaultsResourceDistribution(obj *v1alpha1.ResourceDistribution) {}
