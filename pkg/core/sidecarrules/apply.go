package sidecarrules

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// apply injects the sidecars of sets into p, whose metadata patches are already applied (the
// sidecars are built from p as it is then): init containers after sorting by name, containers,
// volumes, image pull secrets and the pod annotations. When the sets inject no container at all, p is left with
// its metadata patches only, as OpenKruise leaves it.
func apply(p *corev1.Pod, sets []*v1beta1.SidecarSet, now metav1.Time) error {
	hashes, err := PodUpgradeSpecs(p, HashAnnotation)
	if err != nil {
		return err
	}
	noImage, err := PodUpgradeSpecs(p, HashWithoutImageAnnotation)
	if err != nil {
		return err
	}
	working := hotUpgradeWorking(p)
	var containers, inits []*v1beta1.SidecarSetContainer
	var volumes []corev1.Volume
	var secrets []corev1.LocalObjectReference
	annotations := map[string]string{}
	var names []string
	for _, set := range sets {
		names = append(names, set.Name)
		b, err := buildSidecars(p, set, sets, working)
		if err != nil {
			return err
		}
		containers = append(containers, b.containers...)
		inits = append(inits, b.initContainers...)
		volumes = append(volumes, b.volumes...)
		secrets = append(secrets, b.secrets...)
		for k, v := range b.hotAnnotations {
			annotations[k] = v
		}
		if len(b.containers)+len(b.initContainers) == 0 {
			continue
		}
		if err := recordHashes(set, b.sidecarList, now, hashes, noImage); err != nil {
			return err
		}
	}
	if len(containers)+len(inits) == 0 {
		return nil
	}
	if len(inits) > 0 {
		sort.SliceStable(inits, func(i, j int) bool { return inits[i].Name < inits[j].Name })
		p.Spec.InitContainers = mergeContainers(p.Spec.InitContainers, inits)
	}
	if len(containers) > 0 {
		p.Spec.Containers = mergeContainers(p.Spec.Containers, containers)
	}
	p.Spec.Volumes = mergeVolumes(p.Spec.Volumes, volumes)
	p.Spec.ImagePullSecrets = mergeSecrets(p.Spec.ImagePullSecrets, secrets)
	if annotations[HashAnnotation], err = encodeUpgradeSpecs(hashes); err != nil {
		return err
	}
	if annotations[HashWithoutImageAnnotation], err = encodeUpgradeSpecs(noImage); err != nil {
		return err
	}
	annotations[InjectedListAnnotation] = injectedList(p, names)
	for k, v := range annotations {
		p.Annotations[k] = v
	}
	return nil
}

// recordHashes sets set's entries of the pod's hash maps.
func recordHashes(set *v1beta1.SidecarSet, sidecars []string, now metav1.Time, hashes, noImage map[string]UpgradeSpec) error {
	hash, err := SetHash(set)
	if err != nil {
		return err
	}
	withoutImage, err := SetHashWithoutImage(set)
	if err != nil {
		return err
	}
	hashes[set.Name] = UpgradeSpec{
		UpdateTimestamp:    now,
		Hash:               hash,
		SidecarSetName:     set.Name,
		SidecarList:        sidecars,
		ControllerRevision: set.Status.LatestRevision,
	}
	noImage[set.Name] = UpgradeSpec{
		UpdateTimestamp: now,
		Hash:            withoutImage,
		SidecarSetName:  set.Name,
		SidecarList:     append([]string(nil), sidecars...),
	}
	return nil
}
