package uniteddeployment

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/validation"
)

const (
	// SubsetNameLabel names the subset a workload or pod belongs to.
	SubsetNameLabel = "apps.kruise.io/subset-name"
	// SubsetPatchAnnotation records, on a subset workload, the subset patch it was built with.
	SubsetPatchAnnotation = "apps.kruise.io/subset-patch"
	// RevisionLabel names, on a subset workload and its pod template, the UnitedDeployment
	// revision (its ControllerRevision's name) the workload was last written from.
	RevisionLabel = "apps.kruise.io/controller-revision-hash"
)

// SubsetWorkloadPrefix is the generateName of a subset's workload: "<ud>-<subset>-", or "<ud>-"
// when the longer prefix is not a valid DNS subdomain prefix.
func SubsetWorkloadPrefix(udName, subsetName string) string {
	prefix := fmt.Sprintf("%s-%s-", udName, subsetName)
	if len(validation.NameIsDNSSubdomain(prefix, true)) != 0 {
		return udName + "-"
	}
	return prefix
}
