package v1alpha1

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The v1alpha1 and v1beta1 SidecarSets differ in one field each way:
//
//   - spec.namespace exists only in v1alpha1. On the way to v1beta1 it is kept in the
//     ConversionV1alpha1OnlyAnnotation annotation of the v1beta1 object, and restored from it on
//     the way back. When the SidecarSet has no namespaceSelector it also becomes one on
//     kubernetes.io/metadata.name (NamespaceSelectorFor), as OpenKruise converts it, so that
//     OpenKruise and every v1beta1 reader see the SidecarSet limited to its namespace; that
//     selector is dropped again on the way back.
//   - spec.customVersion exists only in v1beta1; a v1alpha1 SidecarSet carries it as its label
//     apps.kruise.io/sidecarset-custom-version, as OpenKruise converts it: on the way to v1beta1
//     the label (present, even empty) becomes spec.customVersion and leaves the labels; on the way
//     to v1alpha1 a set spec.customVersion becomes the label. (A v1alpha1 object read by an earlier
//     Kruise carried it in ConversionV1beta1OnlyAnnotation; that annotation is still read.)
//
// Every other field, status included, has the same name, type and meaning in both versions and is
// copied as is.

// sidecarSetV1alpha1Only is the content of ConversionV1alpha1OnlyAnnotation on a v1beta1 SidecarSet.
type sidecarSetV1alpha1Only struct {
	Spec *sidecarSetSpecV1alpha1Only `json:"spec,omitempty"`
}

type sidecarSetSpecV1alpha1Only struct {
	Namespace string `json:"namespace,omitempty"`
}

// sidecarSetV1beta1Only is the content of ConversionV1beta1OnlyAnnotation on a v1alpha1 SidecarSet.
type sidecarSetV1beta1Only struct {
	Spec *sidecarSetSpecV1beta1Only `json:"spec,omitempty"`
}

type sidecarSetSpecV1beta1Only struct {
	CustomVersion string `json:"customVersion,omitempty"`
}

// ConvertTo converts this v1alpha1 SidecarSet into the v1beta1 hub. spec.customVersion is taken
// from the label SidecarSetCustomVersionLabel (which the result does not carry; or from
// ConversionV1beta1OnlyAnnotation, which earlier versions wrote), and a set spec.namespace
// is recorded in ConversionV1alpha1OnlyAnnotation. The destination's TypeMeta is left alone.
func (src *SidecarSet) ConvertTo(dst *v1beta1.SidecarSet) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = sidecarSetSpecToV1beta1(&src.Spec)
	dst.Status = v1beta1.SidecarSetStatus{
		ObservedGeneration: src.Status.ObservedGeneration,
		MatchedPods:        src.Status.MatchedPods,
		UpdatedPods:        src.Status.UpdatedPods,
		ReadyPods:          src.Status.ReadyPods,
		UpdatedReadyPods:   src.Status.UpdatedReadyPods,
		LatestRevision:     src.Status.LatestRevision,
		CollisionCount:     copyPtr(src.Status.CollisionCount),
		NotInjectedPods:    src.Status.NotInjectedPods,
		Conditions:         slices.Clone(src.Status.Conditions),
	}

	var betaOnly sidecarSetV1beta1Only
	if _, err := takeStash(&dst.ObjectMeta, ConversionV1beta1OnlyAnnotation, &betaOnly); err != nil {
		return err
	}
	if betaOnly.Spec != nil {
		dst.Spec.CustomVersion = betaOnly.Spec.CustomVersion
	}
	if v, ok := dst.Labels[v1beta1.SidecarSetCustomVersionLabel]; ok {
		dst.Spec.CustomVersion = v
		delete(dst.Labels, v1beta1.SidecarSetCustomVersionLabel)
		if len(dst.Labels) == 0 {
			dst.Labels = nil
		}
	}

	var alphaOnly sidecarSetV1alpha1Only
	if src.Spec.Namespace != "" {
		alphaOnly.Spec = &sidecarSetSpecV1alpha1Only{Namespace: src.Spec.Namespace}
		if dst.Spec.NamespaceSelector == nil {
			dst.Spec.NamespaceSelector = NamespaceSelectorFor(src.Spec.Namespace)
		}
	}
	return putStash(&dst.ObjectMeta, ConversionV1alpha1OnlyAnnotation, &alphaOnly, alphaOnly.Spec != nil)
}

// NamespaceSelectorFor is the namespaceSelector a v1alpha1 SidecarSet's spec.namespace ns becomes
// in v1beta1 (OpenKruise's conversion): the namespace's kubernetes.io/metadata.name label.
func NamespaceSelectorFor(ns string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}
}

// ConvertFrom fills this v1alpha1 SidecarSet from the v1beta1 hub. spec.namespace is taken from
// ConversionV1alpha1OnlyAnnotation (which this object does not keep), and a set spec.customVersion
// becomes the label SidecarSetCustomVersionLabel. This object's TypeMeta is left alone.
func (dst *SidecarSet) ConvertFrom(src *v1beta1.SidecarSet) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = sidecarSetSpecFromV1beta1(&src.Spec)
	dst.Status = SidecarSetStatus{
		ObservedGeneration: src.Status.ObservedGeneration,
		MatchedPods:        src.Status.MatchedPods,
		UpdatedPods:        src.Status.UpdatedPods,
		ReadyPods:          src.Status.ReadyPods,
		UpdatedReadyPods:   src.Status.UpdatedReadyPods,
		LatestRevision:     src.Status.LatestRevision,
		CollisionCount:     copyPtr(src.Status.CollisionCount),
		NotInjectedPods:    src.Status.NotInjectedPods,
		Conditions:         slices.Clone(src.Status.Conditions),
	}

	var alphaOnly sidecarSetV1alpha1Only
	if _, err := takeStash(&dst.ObjectMeta, ConversionV1alpha1OnlyAnnotation, &alphaOnly); err != nil {
		return err
	}
	if alphaOnly.Spec != nil {
		dst.Spec.Namespace = alphaOnly.Spec.Namespace
		if apiequality.Semantic.DeepEqual(dst.Spec.NamespaceSelector, NamespaceSelectorFor(dst.Spec.Namespace)) {
			dst.Spec.NamespaceSelector = nil // the conversion's own, from spec.namespace
		}
	}

	if _, err := takeStash(&dst.ObjectMeta, ConversionV1beta1OnlyAnnotation, &sidecarSetV1beta1Only{}); err != nil {
		return err
	}
	if src.Spec.CustomVersion != "" {
		if dst.Labels == nil {
			dst.Labels = map[string]string{}
		}
		dst.Labels[v1beta1.SidecarSetCustomVersionLabel] = src.Spec.CustomVersion
	}
	return nil
}

func sidecarSetSpecToV1beta1(in *SidecarSetSpec) v1beta1.SidecarSetSpec {
	out := v1beta1.SidecarSetSpec{
		Selector:          in.Selector.DeepCopy(),
		NamespaceSelector: in.NamespaceSelector.DeepCopy(),
		InitContainers:    sidecarSetContainersToV1beta1(in.InitContainers),
		Containers:        sidecarSetContainersToV1beta1(in.Containers),
		Volumes:           deepCopyItems(in.Volumes),
		UpdateStrategy: v1beta1.SidecarSetUpdateStrategy{
			Type:             v1beta1.SidecarSetUpdateStrategyType(in.UpdateStrategy.Type),
			Paused:           in.UpdateStrategy.Paused,
			Selector:         in.UpdateStrategy.Selector.DeepCopy(),
			Partition:        copyPtr(in.UpdateStrategy.Partition),
			MaxUnavailable:   copyPtr(in.UpdateStrategy.MaxUnavailable),
			PriorityStrategy: in.UpdateStrategy.PriorityStrategy.DeepCopy(),
		},
		InjectionStrategy: v1beta1.SidecarSetInjectionStrategy{
			Paused: in.InjectionStrategy.Paused,
		},
		ImagePullSecrets:     deepCopyItems(in.ImagePullSecrets),
		RevisionHistoryLimit: copyPtr(in.RevisionHistoryLimit),
	}
	if in.UpdateStrategy.ScatterStrategy != nil {
		out.UpdateStrategy.ScatterStrategy = make(v1beta1.SidecarSetUpdateScatterStrategy, len(in.UpdateStrategy.ScatterStrategy))
		for i, term := range in.UpdateStrategy.ScatterStrategy {
			out.UpdateStrategy.ScatterStrategy[i] = v1beta1.SidecarSetUpdateScatterTerm{Key: term.Key, Value: term.Value}
		}
	}
	if r := in.InjectionStrategy.Revision; r != nil {
		out.InjectionStrategy.Revision = &v1beta1.SidecarSetInjectRevision{
			CustomVersion: copyPtr(r.CustomVersion),
			RevisionName:  copyPtr(r.RevisionName),
			Policy:        v1beta1.SidecarSetInjectRevisionPolicy(r.Policy),
		}
	}
	if in.PatchPodMetadata != nil {
		out.PatchPodMetadata = make([]v1beta1.SidecarSetPatchPodMetadata, len(in.PatchPodMetadata))
		for i, p := range in.PatchPodMetadata {
			out.PatchPodMetadata[i] = v1beta1.SidecarSetPatchPodMetadata{
				Annotations: copyStringMap(p.Annotations),
				PatchPolicy: v1beta1.SidecarSetPatchPolicyType(p.PatchPolicy),
			}
		}
	}
	return out
}

func sidecarSetSpecFromV1beta1(in *v1beta1.SidecarSetSpec) SidecarSetSpec {
	out := SidecarSetSpec{
		Selector:          in.Selector.DeepCopy(),
		NamespaceSelector: in.NamespaceSelector.DeepCopy(),
		InitContainers:    sidecarSetContainersFromV1beta1(in.InitContainers),
		Containers:        sidecarSetContainersFromV1beta1(in.Containers),
		Volumes:           deepCopyItems(in.Volumes),
		UpdateStrategy: SidecarSetUpdateStrategy{
			Type:             SidecarSetUpdateStrategyType(in.UpdateStrategy.Type),
			Paused:           in.UpdateStrategy.Paused,
			Selector:         in.UpdateStrategy.Selector.DeepCopy(),
			Partition:        copyPtr(in.UpdateStrategy.Partition),
			MaxUnavailable:   copyPtr(in.UpdateStrategy.MaxUnavailable),
			PriorityStrategy: in.UpdateStrategy.PriorityStrategy.DeepCopy(),
		},
		InjectionStrategy: SidecarSetInjectionStrategy{
			Paused: in.InjectionStrategy.Paused,
		},
		ImagePullSecrets:     deepCopyItems(in.ImagePullSecrets),
		RevisionHistoryLimit: copyPtr(in.RevisionHistoryLimit),
	}
	if in.UpdateStrategy.ScatterStrategy != nil {
		out.UpdateStrategy.ScatterStrategy = make(SidecarSetUpdateScatterStrategy, len(in.UpdateStrategy.ScatterStrategy))
		for i, term := range in.UpdateStrategy.ScatterStrategy {
			out.UpdateStrategy.ScatterStrategy[i] = SidecarSetUpdateScatterTerm{Key: term.Key, Value: term.Value}
		}
	}
	if r := in.InjectionStrategy.Revision; r != nil {
		out.InjectionStrategy.Revision = &SidecarSetInjectRevision{
			CustomVersion: copyPtr(r.CustomVersion),
			RevisionName:  copyPtr(r.RevisionName),
			Policy:        SidecarSetInjectRevisionPolicy(r.Policy),
		}
	}
	if in.PatchPodMetadata != nil {
		out.PatchPodMetadata = make([]SidecarSetPatchPodMetadata, len(in.PatchPodMetadata))
		for i, p := range in.PatchPodMetadata {
			out.PatchPodMetadata[i] = SidecarSetPatchPodMetadata{
				Annotations: copyStringMap(p.Annotations),
				PatchPolicy: SidecarSetPatchPolicyType(p.PatchPolicy),
			}
		}
	}
	return out
}

func sidecarSetContainersToV1beta1(in []SidecarSetContainer) []v1beta1.SidecarSetContainer {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.SidecarSetContainer, len(in))
	for i := range in {
		c := &in[i]
		o := &out[i]
		c.Container.DeepCopyInto(&o.Container)
		o.PodInjectPolicy = v1beta1.SidecarSetPodInjectPolicy(c.PodInjectPolicy)
		o.UpgradeStrategy = v1beta1.SidecarSetContainerUpgradeStrategy{
			UpgradeType:          v1beta1.SidecarSetContainerUpgradeType(c.UpgradeStrategy.UpgradeType),
			HotUpgradeEmptyImage: c.UpgradeStrategy.HotUpgradeEmptyImage,
		}
		o.ShareVolumePolicy = v1beta1.SidecarSetShareVolumePolicy{
			Type: v1beta1.SidecarSetShareVolumePolicyType(c.ShareVolumePolicy.Type),
		}
		if c.ShareVolumeDevicePolicy != nil {
			o.ShareVolumeDevicePolicy = &v1beta1.SidecarSetShareVolumePolicy{
				Type: v1beta1.SidecarSetShareVolumePolicyType(c.ShareVolumeDevicePolicy.Type),
			}
		}
		if c.TransferEnv != nil {
			o.TransferEnv = make([]v1beta1.SidecarSetTransferEnvVar, len(c.TransferEnv))
			for j, e := range c.TransferEnv {
				o.TransferEnv[j] = v1beta1.SidecarSetTransferEnvVar{
					SourceContainerName: e.SourceContainerName,
					EnvName:             e.EnvName,
					EnvNames:            copyStrings(e.EnvNames),
				}
				if e.SourceContainerNameFrom != nil {
					o.TransferEnv[j].SourceContainerNameFrom = &v1beta1.SidecarSetSourceContainerNameSource{
						FieldRef: e.SourceContainerNameFrom.FieldRef.DeepCopy(),
					}
				}
			}
		}
		if p := c.ResourcesPolicy; p != nil {
			o.ResourcesPolicy = &v1beta1.SidecarSetResourcesPolicy{
				TargetContainersNameRegex: p.TargetContainersNameRegex,
				TargetContainersMode:      v1beta1.SidecarSetTargetContainersMode(p.TargetContainersMode),
			}
			if l := p.ResourcesExpr.Limits; l != nil {
				o.ResourcesPolicy.ResourcesExpr.Limits = &v1beta1.SidecarSetResourceExprs{CPU: l.CPU, Memory: l.Memory}
			}
			if r := p.ResourcesExpr.Requests; r != nil {
				o.ResourcesPolicy.ResourcesExpr.Requests = &v1beta1.SidecarSetResourceExprs{CPU: r.CPU, Memory: r.Memory}
			}
		}
	}
	return out
}

func sidecarSetContainersFromV1beta1(in []v1beta1.SidecarSetContainer) []SidecarSetContainer {
	if in == nil {
		return nil
	}
	out := make([]SidecarSetContainer, len(in))
	for i := range in {
		c := &in[i]
		o := &out[i]
		c.Container.DeepCopyInto(&o.Container)
		o.PodInjectPolicy = SidecarSetPodInjectPolicy(c.PodInjectPolicy)
		o.UpgradeStrategy = SidecarSetContainerUpgradeStrategy{
			UpgradeType:          SidecarSetContainerUpgradeType(c.UpgradeStrategy.UpgradeType),
			HotUpgradeEmptyImage: c.UpgradeStrategy.HotUpgradeEmptyImage,
		}
		o.ShareVolumePolicy = SidecarSetShareVolumePolicy{
			Type: SidecarSetShareVolumePolicyType(c.ShareVolumePolicy.Type),
		}
		if c.ShareVolumeDevicePolicy != nil {
			o.ShareVolumeDevicePolicy = &SidecarSetShareVolumePolicy{
				Type: SidecarSetShareVolumePolicyType(c.ShareVolumeDevicePolicy.Type),
			}
		}
		if c.TransferEnv != nil {
			o.TransferEnv = make([]SidecarSetTransferEnvVar, len(c.TransferEnv))
			for j, e := range c.TransferEnv {
				o.TransferEnv[j] = SidecarSetTransferEnvVar{
					SourceContainerName: e.SourceContainerName,
					EnvName:             e.EnvName,
					EnvNames:            copyStrings(e.EnvNames),
				}
				if e.SourceContainerNameFrom != nil {
					o.TransferEnv[j].SourceContainerNameFrom = &SidecarSetSourceContainerNameSource{
						FieldRef: e.SourceContainerNameFrom.FieldRef.DeepCopy(),
					}
				}
			}
		}
		if p := c.ResourcesPolicy; p != nil {
			o.ResourcesPolicy = &SidecarSetResourcesPolicy{
				TargetContainersNameRegex: p.TargetContainersNameRegex,
				TargetContainersMode:      SidecarSetTargetContainersMode(p.TargetContainersMode),
			}
			if l := p.ResourcesExpr.Limits; l != nil {
				o.ResourcesPolicy.ResourcesExpr.Limits = &SidecarSetResourceExprs{CPU: l.CPU, Memory: l.Memory}
			}
			if r := p.ResourcesExpr.Requests; r != nil {
				o.ResourcesPolicy.ResourcesExpr.Requests = &SidecarSetResourceExprs{CPU: r.CPU, Memory: r.Memory}
			}
		}
	}
	return out
}
