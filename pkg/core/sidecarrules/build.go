package sidecarrules

import (
	"fmt"
	"regexp"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// subPathExprEnv finds the $(VAR) references of a volume mount's subPathExpr.
const subPathExprEnv = `\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)`

// built is what one SidecarSet contributes to a pod.
type built struct {
	containers, initContainers []*v1beta1.SidecarSetContainer
	volumes                    []corev1.Volume
	secrets                    []corev1.LocalObjectReference
	// sidecarList is the UpgradeSpec.SidecarList of the SidecarSet.
	sidecarList []string
	// hotAnnotations are the pod annotations of the hot-upgrade sidecars.
	hotAnnotations map[string]string
}

// buildSidecars prepares set's containers and init containers for pod, as OpenKruise does at
// pod creation: each gets the volume mounts (and devices) of the pod's app containers when its
// share policy is enabled, the env of transferEnv and of those mounts' subPathExpr, and
// IS_INJECTED=true; hot-upgrade sidecars become two copies. working is the pod's
// WorkingHotUpgradeContainerAnnotation map, updated for the hot-upgrade sidecars. A container
// with a resourcesPolicy gets the resources it computes from the pod (resources.go), sets being
// all the SidecarSets injected; its failure refuses the pod.
func buildSidecars(pod *corev1.Pod, set *v1beta1.SidecarSet, sets []*v1beta1.SidecarSet, working map[string]string) (built, error) {
	var b built
	volumes := make(map[string]*corev1.Volume, len(set.Spec.Volumes))
	for i := range set.Spec.Volumes {
		if _, dup := volumes[set.Spec.Volumes[i].Name]; !dup {
			volumes[set.Spec.Volumes[i].Name] = &set.Spec.Volumes[i]
		}
	}
	list := map[string]bool{}
	for i := range set.Spec.InitContainers {
		c := set.Spec.InitContainers[i].DeepCopy()
		if err := applyResourcesPolicy(pod, sets, set, c, fmt.Sprintf("spec.initContainers[%d]", i)); err != nil {
			return b, err
		}
		native := isNativeSidecar(&c.Container)
		if native {
			list[c.Name] = true
		}
		prepare(pod, c, volumes, &b)
		if native && c.UpgradeStrategy.UpgradeType == v1beta1.SidecarSetHotUpgrade {
			b.initContainers = append(b.initContainers, hotUpgradeCopies(c, working, &b)...)
		} else {
			b.initContainers = append(b.initContainers, c)
		}
	}
	b.secrets = append(b.secrets, set.Spec.ImagePullSecrets...)
	for i := range set.Spec.Containers {
		c := set.Spec.Containers[i].DeepCopy()
		if err := applyResourcesPolicy(pod, sets, set, c, fmt.Sprintf("spec.containers[%d]", i)); err != nil {
			return b, err
		}
		list[c.Name] = true
		prepare(pod, c, volumes, &b)
		if c.UpgradeStrategy.UpgradeType == v1beta1.SidecarSetHotUpgrade {
			b.containers = append(b.containers, hotUpgradeCopies(c, working, &b)...)
		} else {
			b.containers = append(b.containers, c)
		}
	}
	b.sidecarList = make([]string, 0, len(list))
	for name := range list {
		b.sidecarList = append(b.sidecarList, name)
	}
	sort.Strings(b.sidecarList)
	return b, nil
}

// prepare completes one sidecar container c for pod and collects the SidecarSet volumes it uses
// into b. A mount of a volume the SidecarSet does not declare is left for the pod's own volumes.
func prepare(pod *corev1.Pod, c *v1beta1.SidecarSetContainer, volumes map[string]*corev1.Volume, b *built) {
	mounts, mountEnvs := sharedMounts(pod, c)
	envs := mergeEnv(transferEnvs(pod, c), mountEnvs)
	for _, m := range c.VolumeMounts {
		if v, ok := volumes[m.Name]; ok {
			b.volumes = append(b.volumes, *v.DeepCopy())
		}
	}
	for _, d := range c.VolumeDevices {
		if v, ok := volumes[d.Name]; ok {
			b.volumes = append(b.volumes, *v.DeepCopy())
		}
	}
	c.VolumeMounts = mergeMounts(c.VolumeMounts, mounts)
	c.VolumeDevices = mergeDevices(c.VolumeDevices, sharedDevices(pod, c))
	c.Env = append(c.Env, corev1.EnvVar{Name: InjectedEnv, Value: "true"})
	c.Env = mergeEnv(c.Env, envs)
}

// appContainers returns the pod's containers that no SidecarSet injected.
func appContainers(pod *corev1.Pod) []*corev1.Container {
	var out []*corev1.Container
	for i := range pod.Spec.Containers {
		if !isInjected(&pod.Spec.Containers[i]) {
			out = append(out, &pod.Spec.Containers[i])
		}
	}
	return out
}

func isInjected(c *corev1.Container) bool {
	for _, e := range c.Env {
		if e.Name == InjectedEnv {
			return e.Value == "true"
		}
	}
	return false
}

// sharedMounts returns, when c's shareVolumePolicy is enabled, the volume mounts of the pod's app
// containers, and the env vars their subPathExpr refer to (taken from the same container).
func sharedMounts(pod *corev1.Pod, c *v1beta1.SidecarSetContainer) ([]corev1.VolumeMount, []corev1.EnvVar) {
	if c.ShareVolumePolicy.Type != v1beta1.SidecarSetShareVolumePolicyEnabled {
		return nil, nil
	}
	ref := regexp.MustCompile(subPathExprEnv)
	var mounts []corev1.VolumeMount
	var envs []corev1.EnvVar
	for _, app := range appContainers(pod) {
		for _, m := range app.VolumeMounts {
			mounts = append(mounts, *m.DeepCopy())
			for _, match := range ref.FindAllStringSubmatch(m.SubPathExpr, -1) {
				if e := envVar(app, match[1]); e != nil {
					envs = append(envs, *e.DeepCopy())
				}
			}
		}
	}
	return mounts, envs
}

// sharedDevices returns, when c's shareVolumeDevicePolicy is enabled, the volume devices of the
// pod's app containers.
func sharedDevices(pod *corev1.Pod, c *v1beta1.SidecarSetContainer) []corev1.VolumeDevice {
	p := c.ShareVolumeDevicePolicy
	if p == nil || p.Type != v1beta1.SidecarSetShareVolumePolicyEnabled {
		return nil
	}
	var devices []corev1.VolumeDevice
	for _, app := range appContainers(pod) {
		devices = append(devices, app.VolumeDevices...)
	}
	return devices
}

func envVar(c *corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}
