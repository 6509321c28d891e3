package defaults

import (
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// SetDefaultsSidecarSetV1beta1 applies the SidecarSet defaults to the storage
// version. Sources: oracle apps.kruise.io_sidecarsets.yaml (descriptions and
// structural defaults) and the brief:
//   - spec.updateStrategy.type: RollingUpdate ("default is RollingUpdate")
//   - spec.updateStrategy.maxUnavailable: 1 ("Default value is 1.")
//   - spec.updateStrategy.partition: 0 ("Default value is 0.")
//   - spec.revisionHistoryLimit: 10 ("default value is 10")
//   - spec.injectionStrategy.revision.policy: Always, when revision is given
//     (structural default `default: Always`)
//   - spec.patchPodMetadata[].patchPolicy: Retain ("Default is \"Retain\"")
//   - for every entry of spec.containers and spec.initContainers:
//     podInjectPolicy BeforeAppContainer ("default BeforeAppContainerType"),
//     upgradeStrategy.upgradeType ColdUpgrade ("default is ColdUpgrade"),
//     shareVolumePolicy.type disabled (brief),
//     resourcesPolicy.targetContainersNameRegex ".*" when resourcesPolicy is
//     given (structural default `default: .*`).
//
// The embedded corev1.Container fields are left alone.
func SetDefaultsSidecarSetV1beta1(obj *v1beta1.SidecarSet) {
	spec := &obj.Spec
	us := &spec.UpdateStrategy
	defaultString(&us.Type, v1beta1.SidecarSetRollingUpdateStrategy)
	defaultIntOrString(&us.MaxUnavailable, intstr.FromInt32(1))
	defaultIntOrString(&us.Partition, intstr.FromInt32(0))
	defaultInt32(&spec.RevisionHistoryLimit, 10)
	if r := spec.InjectionStrategy.Revision; r != nil {
		defaultString(&r.Policy, v1beta1.SidecarSetAlwaysRevisionPolicy)
	}
	for i := range spec.PatchPodMetadata {
		defaultString(&spec.PatchPodMetadata[i].PatchPolicy, v1beta1.SidecarSetRetainPatchPolicy)
	}
	for i := range spec.Containers {
		setSidecarContainerDefaultsV1beta1(&spec.Containers[i])
	}
	for i := range spec.InitContainers {
		setSidecarContainerDefaultsV1beta1(&spec.InitContainers[i])
	}
}

func setSidecarContainerDefaultsV1beta1(c *v1beta1.SidecarSetContainer) {
	defaultString(&c.PodInjectPolicy, v1beta1.SidecarSetBeforeAppContainer)
	defaultString(&c.UpgradeStrategy.UpgradeType, v1beta1.SidecarSetColdUpgrade)
	defaultString(&c.ShareVolumePolicy.Type, v1beta1.SidecarSetShareVolumePolicyDisabled)
	if c.ResourcesPolicy != nil {
		defaultString(&c.ResourcesPolicy.TargetContainersNameRegex, ".*")
	}
}

// SetDefaultsSidecarSet applies the SidecarSet defaults to the v1alpha1
// version; same values and sources as SetDefaultsSidecarSetV1beta1:
// updateStrategy {type RollingUpdate, maxUnavailable 1, partition 0},
// revisionHistoryLimit 10, injectionStrategy.revision.policy Always (when
// given), patchPodMetadata[].patchPolicy Retain, and per container
// podInjectPolicy BeforeAppContainer, upgradeType ColdUpgrade,
// shareVolumePolicy.type disabled, resourcesPolicy.targetContainersNameRegex
// ".*" (when given).
func SetDefaultsSidecarSet(obj *v1alpha1.SidecarSet) {
	spec := &obj.Spec
	us := &spec.UpdateStrategy
	defaultString(&us.Type, v1alpha1.SidecarSetRollingUpdateStrategy)
	defaultIntOrString(&us.MaxUnavailable, intstr.FromInt32(1))
	defaultIntOrString(&us.Partition, intstr.FromInt32(0))
	defaultInt32(&spec.RevisionHistoryLimit, 10)
	if r := spec.InjectionStrategy.Revision; r != nil {
		defaultString(&r.Policy, v1alpha1.SidecarSetAlwaysRevisionPolicy)
	}
	for i := range spec.PatchPodMetadata {
		defaultString(&spec.PatchPodMetadata[i].PatchPolicy, v1alpha1.SidecarSetRetainPatchPolicy)
	}
	for i := range spec.Containers {
		setSidecarContainerDefaults(&spec.Containers[i])
	}
	for i := range spec.InitContainers {
		setSidecarContainerDefaults(&spec.InitContainers[i])
	}
}

func setSidecarContainerDefaults(c *v1alpha1.SidecarSetContainer) {
	defaultString(&c.PodInjectPolicy, v1alpha1.SidecarSetBeforeAppContainer)
	defaultString(&c.UpgradeStrategy.UpgradeType, v1alpha1.SidecarSetColdUpgrade)
	defaultString(&c.ShareVolumePolicy.Type, v1alpha1.SidecarSetShareVolumePolicyDisabled)
	if c.ResourcesPolicy != nil {
		defaultString(&c.ResourcesPolicy.TargetContainersNameRegex, ".*")
	}
}
