package defaults

import (
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// SetDefaultsCloneSet applies the CloneSet defaults (oracle: field
// descriptions in apps.kruise.io_clonesets.yaml):
//   - spec.replicas: 1 ("If unspecified, defaults to 1.")
//   - spec.revisionHistoryLimit: 10 ("The default value is 10.")
//   - spec.updateStrategy.type: ReCreate ("Default is ReCreate.")
//   - spec.updateStrategy.partition: 0 ("Default value is 0.")
//   - spec.updateStrategy.maxUnavailable: "20%" ("Defaults to 20%.")
//   - spec.updateStrategy.maxSurge: 0 ("Defaults to 0.")
//   - spec.updateStrategy.inPlaceUpdateStrategy: {} for InPlaceIfPossible and
//     InPlaceOnly (as OpenKruise stores it)
//
// The pod template and volumeClaimTemplates are defaulted by
// SetDefaultsCloneSetTemplate; scaleStrategy is left alone.
func SetDefaultsCloneSet(obj *v1alpha1.CloneSet) {
	spec := &obj.Spec
	defaultInt32(&spec.Replicas, 1)
	defaultInt32(&spec.RevisionHistoryLimit, 10)

	us := &spec.UpdateStrategy
	defaultString(&us.Type, v1alpha1.RecreateCloneSetUpdateStrategyType)
	defaultIntOrString(&us.Partition, intstr.FromInt32(0))
	defaultIntOrString(&us.MaxUnavailable, intstr.FromString("20%"))
	defaultIntOrString(&us.MaxSurge, intstr.FromInt32(0))
	if us.InPlaceUpdateStrategy == nil && (us.Type == v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType ||
		us.Type == v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType) {
		us.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{}
	}
}
