package defaults

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// SetDefaultsSidecarSetV1beta1 defaults a SidecarSet of the storage version
// as OpenKruise v1.9.0's SidecarSet webhook does, so that the stored spec,
// and the hash annotations computed over its containers, are OpenKruise's:
//   - spec.updateStrategy: type RollingUpdate, maxUnavailable 1 and
//     partition 0 (both integers) when unset;
//   - spec.revisionHistoryLimit: 10;
//   - spec.injectionStrategy.revision.policy: Always, when revision is given
//     (also the CRD's structural default);
//   - spec.patchPodMetadata[].patchPolicy: Retain;
//   - spec.containers[].podInjectPolicy BeforeAppContainer, but
//     spec.initContainers[].podInjectPolicy AfterAppContainer;
//   - for every entry of containers and initContainers:
//     upgradeStrategy.upgradeType ColdUpgrade, shareVolumePolicy.type
//     disabled, resourcesPolicy.targetContainersNameRegex ".*" when
//     resourcesPolicy is given (the CRD's structural default `default: .*`,
//     which the API server applies anyway), transferEnv[]'s
//     sourceContainerNameFrom.fieldRef apiVersion v1, and Kubernetes'
//     container defaults on the embedded container: SetDefaults_Container
//     (imagePullPolicy from the image tag, termination message path and
//     policy), port protocol TCP, env fieldRef apiVersion v1, resource limits
//     and requests rounded up to milli scale, SetDefaults_Probe and the
//     httpGet defaults on the liveness and readiness probes (not on the
//     startup probe) and the httpGet defaults of the lifecycle hooks;
//   - spec.volumes: Kubernetes' volume defaults, as for a pod template's
//     volumes (setVolumesDefaults).
//
// Only empty fields are filled, so applying it twice equals applying it once.
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
		setSidecarContainerDefaultsV1beta1(&spec.Containers[i], v1beta1.SidecarSetBeforeAppContainer)
	}
	for i := range spec.InitContainers {
		setSidecarContainerDefaultsV1beta1(&spec.InitContainers[i], v1beta1.SidecarSetAfterAppContainer)
	}
	setVolumesDefaults(spec.Volumes)
}

func setSidecarContainerDefaultsV1beta1(c *v1beta1.SidecarSetContainer, inject v1beta1.SidecarSetPodInjectPolicy) {
	defaultString(&c.PodInjectPolicy, inject)
	defaultString(&c.UpgradeStrategy.UpgradeType, v1beta1.SidecarSetColdUpgrade)
	defaultString(&c.ShareVolumePolicy.Type, v1beta1.SidecarSetShareVolumePolicyDisabled)
	if c.ResourcesPolicy != nil {
		defaultString(&c.ResourcesPolicy.TargetContainersNameRegex, ".*")
	}
	for i := range c.TransferEnv {
		if from := c.TransferEnv[i].SourceContainerNameFrom; from != nil {
			setFieldRefDefaults(from.FieldRef)
		}
	}
	setSidecarContainerBodyDefaults(&c.Container)
}

// SetDefaultsSidecarSet defaults a v1alpha1 SidecarSet with the rules and
// sources of SetDefaultsSidecarSetV1beta1: updateStrategy {type
// RollingUpdate, maxUnavailable 1, partition 0}, revisionHistoryLimit 10,
// injectionStrategy.revision.policy Always (when given),
// patchPodMetadata[].patchPolicy Retain, podInjectPolicy BeforeAppContainer
// for containers and AfterAppContainer for initContainers, and for both
// upgradeType ColdUpgrade, shareVolumePolicy.type disabled,
// resourcesPolicy.targetContainersNameRegex ".*" (when given), transferEnv
// fieldRef apiVersion v1 and Kubernetes' container defaults without the
// startup probe's; Kubernetes' volume defaults on spec.volumes.
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
		setSidecarContainerDefaults(&spec.Containers[i], v1alpha1.SidecarSetBeforeAppContainer)
	}
	for i := range spec.InitContainers {
		setSidecarContainerDefaults(&spec.InitContainers[i], v1alpha1.SidecarSetAfterAppContainer)
	}
	setVolumesDefaults(spec.Volumes)
}

func setSidecarContainerDefaults(c *v1alpha1.SidecarSetContainer, inject v1alpha1.SidecarSetPodInjectPolicy) {
	defaultString(&c.PodInjectPolicy, inject)
	defaultString(&c.UpgradeStrategy.UpgradeType, v1alpha1.SidecarSetColdUpgrade)
	defaultString(&c.ShareVolumePolicy.Type, v1alpha1.SidecarSetShareVolumePolicyDisabled)
	if c.ResourcesPolicy != nil {
		defaultString(&c.ResourcesPolicy.TargetContainersNameRegex, ".*")
	}
	for i := range c.TransferEnv {
		if from := c.TransferEnv[i].SourceContainerNameFrom; from != nil {
			setFieldRefDefaults(from.FieldRef)
		}
	}
	setSidecarContainerBodyDefaults(&c.Container)
}

// setSidecarContainerBodyDefaults is what OpenKruise gives the container
// embedded in a sidecar: Kubernetes' SetDefaults_Container and the defaults
// of its parts, the startup probe excepted.
func setSidecarContainerBodyDefaults(c *corev1.Container) {
	setContainerOwnDefaults(c)
	setContainerPartsDefaults(c)
}
