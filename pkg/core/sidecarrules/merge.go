package sidecarrules

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// mergeEnv appends to original the vars of additional whose names it lacks (first one wins).
func mergeEnv(original, additional []corev1.EnvVar) []corev1.EnvVar {
	seen := make(map[string]bool, len(original))
	for _, e := range original {
		seen[e.Name] = true
	}
	for _, e := range additional {
		if !seen[e.Name] {
			original = append(original, e)
			seen[e.Name] = true
		}
	}
	return original
}

// mergeMounts appends to original the mounts of additional whose mount paths it lacks.
func mergeMounts(original, additional []corev1.VolumeMount) []corev1.VolumeMount {
	seen := make(map[string]bool, len(original))
	for _, m := range original {
		seen[m.MountPath] = true
	}
	for _, m := range additional {
		if !seen[m.MountPath] {
			original = append(original, m)
			seen[m.MountPath] = true
		}
	}
	return original
}

// mergeDevices appends to original the devices of additional whose device paths it lacks.
func mergeDevices(original, additional []corev1.VolumeDevice) []corev1.VolumeDevice {
	seen := make(map[string]bool, len(original))
	for _, d := range original {
		seen[d.DevicePath] = true
	}
	for _, d := range additional {
		if !seen[d.DevicePath] {
			original = append(original, d)
			seen[d.DevicePath] = true
		}
	}
	return original
}

// mergeVolumes appends to original the volumes of additional whose names it lacks: the pod's
// volumes win over the SidecarSets', and an earlier SidecarSet's over a later one's.
func mergeVolumes(original, additional []corev1.Volume) []corev1.Volume {
	seen := make(map[string]bool, len(original))
	for _, v := range original {
		seen[v.Name] = true
	}
	for _, v := range additional {
		if !seen[v.Name] {
			original = append(original, v)
			seen[v.Name] = true
		}
	}
	return original
}

// mergeSecrets returns the pod's image pull secrets followed by the SidecarSets' ones, each
// name once.
func mergeSecrets(inPod, inSets []corev1.LocalObjectReference) []corev1.LocalObjectReference {
	var out []corev1.LocalObjectReference
	seen := map[string]bool{}
	for _, list := range [][]corev1.LocalObjectReference{inPod, inSets} {
		for _, s := range list {
			if !seen[s.Name] {
				out = append(out, s)
				seen[s.Name] = true
			}
		}
	}
	return out
}

// mergeContainers places sidecars among the pod's containers: a sidecar named like a pod
// container replaces it where it is; the others go before the pod's containers
// (BeforeAppContainer) or after them (any other policy), in the order given.
func mergeContainers(inPod []corev1.Container, sidecars []*v1beta1.SidecarSetContainer) []corev1.Container {
	index := make(map[string]int, len(inPod))
	for i, c := range inPod {
		index[c.Name] = i
	}
	var before, after []corev1.Container
	for _, s := range sidecars {
		if i, ok := index[s.Name]; ok {
			inPod[i] = s.Container
			continue
		}
		if s.PodInjectPolicy == v1beta1.SidecarSetBeforeAppContainer {
			before = append(before, s.Container)
		} else {
			after = append(after, s.Container)
		}
	}
	out := make([]corev1.Container, 0, len(before)+len(inPod)+len(after))
	out = append(out, before...)
	out = append(out, inPod...)
	return append(out, after...)
}
