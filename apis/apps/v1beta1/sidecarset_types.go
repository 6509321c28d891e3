package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/pub"
)

// SidecarSetSpec says which pods get which sidecar containers and volumes, and how sidecars already
// injected are updated.
type SidecarSetSpec struct {
	// Selector picks the pods the sidecars are injected into.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// NamespaceSelector, if set, restricts injection to pods of namespaces whose labels match it.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// InitContainers are the init containers injected into selected pods.
	// +optional
	InitContainers []SidecarSetContainer `json:"initContainers,omitempty"`
	// Containers are the sidecar containers injected into selected pods.
	// +optional
	Containers []SidecarSetContainer `json:"containers,omitempty"`
	// Volumes are pod volumes the injected containers may mount; they are added to selected pods.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Volumes []corev1.Volume `json:"volumes,omitempty"`
	// UpdateStrategy says how sidecars already injected into pods are updated in place.
	// +optional
	UpdateStrategy SidecarSetUpdateStrategy `json:"updateStrategy,omitempty"`
	// InjectionStrategy says when and which revision of the sidecars is injected into new pods.
	// +optional
	InjectionStrategy SidecarSetInjectionStrategy `json:"injectionStrategy,omitempty"`
	// ImagePullSecrets are added to selected pods so that the sidecar images can be pulled.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// RevisionHistoryLimit is how many old revisions of the SidecarSet are kept.
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
	// CustomVersion is a user-chosen version name for the SidecarSet, recorded on its revisions (label
	// SidecarSetCustomVersionLabel) so that injectionStrategy.revision.customVersion can refer to it.
	// A v1alpha1 SidecarSet carries it as that label on itself.
	// +optional
	CustomVersion string `json:"customVersion,omitempty"`
	// PatchPodMetadata are metadata changes applied to selected pods on injection.
	// +optional
	PatchPodMetadata []SidecarSetPatchPodMetadata `json:"patchPodMetadata,omitempty"`
}

// SidecarSetContainer is a container to inject: a full Kubernetes container (its fields are inline
// and are not validated by the CRD schema) plus the SidecarSet's injection and update settings.
// +kubebuilder:pruning:PreserveUnknownFields
type SidecarSetContainer struct {
	// Container is the container to inject.
	// +kubebuilder:validation:Schemaless
	corev1.Container `json:",inline"`

	// PodInjectPolicy says where the container goes relative to the pod's own containers
	// (BeforeAppContainer, the default, or AfterAppContainer).
	// +optional
	PodInjectPolicy SidecarSetPodInjectPolicy `json:"podInjectPolicy,omitempty"`
	// UpgradeStrategy says how the container is upgraded: in place, or by hot upgrade.
	// +optional
	UpgradeStrategy SidecarSetContainerUpgradeStrategy `json:"upgradeStrategy,omitempty"`
	// ShareVolumePolicy says whether the container also mounts the volumes of the pod's other containers.
	// +optional
	ShareVolumePolicy SidecarSetShareVolumePolicy `json:"shareVolumePolicy,omitempty"`
	// ShareVolumeDevicePolicy says whether the container also gets the volume devices of the pod's other
	// containers.
	// +optional
	ShareVolumeDevicePolicy *SidecarSetShareVolumePolicy `json:"shareVolumeDevicePolicy,omitempty"`
	// TransferEnv copies environment variables from the pod's other containers into this one.
	// +optional
	TransferEnv []SidecarSetTransferEnvVar `json:"transferEnv,omitempty"`
	// ResourcesPolicy, if set, computes the container's resources from those of the pod's other
	// containers.
	// +optional
	ResourcesPolicy *SidecarSetResourcesPolicy `json:"resourcesPolicy,omitempty"`
}

// SidecarSetPodInjectPolicy is where an injected container is placed among the pod's containers.
type SidecarSetPodInjectPolicy string

// SidecarSetCustomVersionLabel is, on a SidecarSet's ControllerRevision, the SidecarSet's custom
// version (spec.customVersion), and on a v1alpha1 SidecarSet its custom version itself.
const SidecarSetCustomVersionLabel = "apps.kruise.io/sidecarset-custom-version"

const (
	// SidecarSetBeforeAppContainer places the container before the pod's own containers.
	SidecarSetBeforeAppContainer SidecarSetPodInjectPolicy = "BeforeAppContainer"
	// SidecarSetAfterAppContainer places the container after the pod's own containers.
	SidecarSetAfterAppContainer SidecarSetPodInjectPolicy = "AfterAppContainer"
)

// SidecarSetContainerUpgradeType is how an injected container is upgraded.
type SidecarSetContainerUpgradeType string

const (
	// SidecarSetColdUpgrade restarts the container in place with the new spec.
	SidecarSetColdUpgrade SidecarSetContainerUpgradeType = "ColdUpgrade"
	// SidecarSetHotUpgrade runs two copies of the container and switches between them without downtime.
	SidecarSetHotUpgrade SidecarSetContainerUpgradeType = "HotUpgrade"
)

// SidecarSetContainerUpgradeStrategy says how an injected container is upgraded.
type SidecarSetContainerUpgradeStrategy struct {
	// UpgradeType is ColdUpgrade (the default) or HotUpgrade.
	// +optional
	UpgradeType SidecarSetContainerUpgradeType `json:"upgradeType,omitempty"`
	// HotUpgradeEmptyImage is the placeholder image the idle copy of a hot-upgraded container runs.
	// +optional
	HotUpgradeEmptyImage string `json:"hotUpgradeEmptyImage,omitempty"`
}

// SidecarSetShareVolumePolicyType turns volume sharing on or off.
type SidecarSetShareVolumePolicyType string

const (
	// SidecarSetShareVolumePolicyEnabled shares the other containers' volumes with the sidecar.
	SidecarSetShareVolumePolicyEnabled SidecarSetShareVolumePolicyType = "enabled"
	// SidecarSetShareVolumePolicyDisabled does not share them.
	SidecarSetShareVolumePolicyDisabled SidecarSetShareVolumePolicyType = "disabled"
)

// SidecarSetShareVolumePolicy says whether an injected container shares the volumes (or volume
// devices) of the pod's other containers.
type SidecarSetShareVolumePolicy struct {
	// Type is enabled or disabled.
	// +optional
	Type SidecarSetShareVolumePolicyType `json:"type,omitempty"`
}

// SidecarSetTransferEnvVar copies environment variables from another container of the pod.
type SidecarSetTransferEnvVar struct {
	// SourceContainerName is the container to copy from.
	// +optional
	SourceContainerName string `json:"sourceContainerName,omitempty"`
	// SourceContainerNameFrom takes the source container's name from a field of the pod instead.
	// +optional
	SourceContainerNameFrom *SidecarSetSourceContainerNameSource `json:"sourceContainerNameFrom,omitempty"`
	// EnvName is one variable to copy.
	// +optional
	EnvName string `json:"envName,omitempty"`
	// EnvNames are several variables to copy.
	// +optional
	EnvNames []string `json:"envNames,omitempty"`
}

// SidecarSetSourceContainerNameSource locates the source container's name in the pod.
type SidecarSetSourceContainerNameSource struct {
	// FieldRef selects a pod field, such as a label or annotation, that holds the name.
	// +optional
	FieldRef *corev1.ObjectFieldSelector `json:"fieldRef,omitempty"`
}

// SidecarSetTargetContainersMode is how the resources of several target containers are combined.
// +kubebuilder:validation:Enum=sum;max
type SidecarSetTargetContainersMode string

const (
	// SidecarSetTargetContainersModeSum adds the target containers' resources together.
	SidecarSetTargetContainersModeSum SidecarSetTargetContainersMode = "sum"
	// SidecarSetTargetContainersModeMax takes the largest of the target containers' resources.
	SidecarSetTargetContainersModeMax SidecarSetTargetContainersMode = "max"
)

// SidecarSetResourcesPolicy computes an injected container's resources from those of other containers.
type SidecarSetResourcesPolicy struct {
	// TargetContainersNameRegex selects, by name, the containers whose resources are the input.
	// +optional
	// +kubebuilder:default=".*"
	TargetContainersNameRegex string `json:"targetContainersNameRegex,omitempty"`
	// TargetContainersMode combines the target containers' resources by sum or by max.
	TargetContainersMode SidecarSetTargetContainersMode `json:"targetContainersMode"`
	// ResourcesExpr gives, per resource, the expression that turns the combined input into the
	// sidecar's requests and limits.
	ResourcesExpr SidecarSetResourcesExpr `json:"resourcesExpr"`
}

// SidecarSetResourcesExpr holds the expressions for an injected container's limits and requests.
type SidecarSetResourcesExpr struct {
	// Limits are the expressions for the container's limits.
	// +optional
	Limits *SidecarSetResourceExprs `json:"limits,omitempty"`
	// Requests are the expressions for the container's requests.
	// +optional
	Requests *SidecarSetResourceExprs `json:"requests,omitempty"`
}

// SidecarSetResourceExprs holds one expression per resource, in terms of the combined input value.
type SidecarSetResourceExprs struct {
	// CPU is the expression for CPU.
	// +optional
	CPU string `json:"cpu,omitempty"`
	// Memory is the expression for memory.
	// +optional
	Memory string `json:"memory,omitempty"`
}

// SidecarSetUpdateStrategyType is how a SidecarSet updates the sidecars it has injected.
type SidecarSetUpdateStrategyType string

const (
	// SidecarSetNotUpdateStrategy leaves injected sidecars as they are.
	SidecarSetNotUpdateStrategy SidecarSetUpdateStrategyType = "NotUpdate"
	// SidecarSetRollingUpdateStrategy updates injected sidecars in place, a few pods at a time.
	SidecarSetRollingUpdateStrategy SidecarSetUpdateStrategyType = "RollingUpdate"
)

// SidecarSetUpdateStrategy says how sidecars already injected into pods are updated.
type SidecarSetUpdateStrategy struct {
	// Type is RollingUpdate (the default) or NotUpdate.
	// +optional
	Type SidecarSetUpdateStrategyType `json:"type,omitempty"`
	// Paused stops the update where it is.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// Selector, if set, limits the update to matching pods.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Partition is how many (or what percentage of) pods keep the old sidecars.
	// +optional
	Partition *intstr.IntOrString `json:"partition,omitempty"`
	// MaxUnavailable is how many (or what percentage of) pods may be unavailable during the update.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// PriorityStrategy orders the pods of the update.
	// +optional
	PriorityStrategy *pub.UpdatePriorityStrategy `json:"priorityStrategy,omitempty"`
	// ScatterStrategy spreads the updated pods evenly over pods carrying the given labels.
	// +optional
	ScatterStrategy SidecarSetUpdateScatterStrategy `json:"scatterStrategy,omitempty"`
}

// SidecarSetUpdateScatterStrategy lists the labels whose pods are updated evenly spread out.
type SidecarSetUpdateScatterStrategy []SidecarSetUpdateScatterTerm

// SidecarSetUpdateScatterTerm is one label whose pods are spread over the update.
type SidecarSetUpdateScatterTerm struct {
	// Key is the label key.
	Key string `json:"key"`
	// Value is the label value.
	Value string `json:"value"`
}

// SidecarSetInjectionStrategy says how sidecars are injected into new pods.
type SidecarSetInjectionStrategy struct {
	// Paused stops injection into new pods.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// Revision, if set, injects a given revision of the SidecarSet instead of the latest.
	// +optional
	Revision *SidecarSetInjectRevision `json:"revision,omitempty"`
}

// SidecarSetInjectRevisionPolicy says which pods get the pinned revision.
// +kubebuilder:validation:Enum=Always;Partial
type SidecarSetInjectRevisionPolicy string

const (
	// SidecarSetAlwaysRevisionPolicy injects the pinned revision into every new pod.
	SidecarSetAlwaysRevisionPolicy SidecarSetInjectRevisionPolicy = "Always"
	// SidecarSetPartialRevisionPolicy injects the pinned revision only into new pods that the update
	// strategy (partition, selector) keeps on the old sidecars.
	SidecarSetPartialRevisionPolicy SidecarSetInjectRevisionPolicy = "Partial"
)

// SidecarSetInjectRevision pins the revision of the SidecarSet that is injected.
type SidecarSetInjectRevision struct {
	// CustomVersion selects the revision by the SidecarSet's custom version label.
	// +optional
	CustomVersion *string `json:"customVersion,omitempty"`
	// RevisionName selects the revision by the name of its ControllerRevision.
	// +optional
	RevisionName *string `json:"revisionName,omitempty"`
	// Policy is Always (the default) or Partial.
	// +optional
	// +kubebuilder:default=Always
	Policy SidecarSetInjectRevisionPolicy `json:"policy,omitempty"`
}

// SidecarSetPatchPolicyType is how a pod metadata patch treats values already on the pod.
type SidecarSetPatchPolicyType string

const (
	// SidecarSetRetainPatchPolicy keeps a value already on the pod.
	SidecarSetRetainPatchPolicy SidecarSetPatchPolicyType = "Retain"
	// SidecarSetOverwritePatchPolicy replaces a value already on the pod.
	SidecarSetOverwritePatchPolicy SidecarSetPatchPolicyType = "Overwrite"
	// SidecarSetMergePatchJSONPatchPolicy merges a JSON value into the one already on the pod.
	SidecarSetMergePatchJSONPatchPolicy SidecarSetPatchPolicyType = "MergePatchJson"
)

// SidecarSetPatchPodMetadata is a change to selected pods' metadata made on injection.
type SidecarSetPatchPodMetadata struct {
	// Annotations are the annotations to set.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// PatchPolicy is Retain (the default), Overwrite or MergePatchJson.
	// +optional
	PatchPolicy SidecarSetPatchPolicyType `json:"patchPolicy,omitempty"`
}

// SidecarSetStatus reports the injection and update progress of a SidecarSet.
type SidecarSetStatus struct {
	// ObservedGeneration is the generation of the spec the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// MatchedPods is how many pods carry the SidecarSet's sidecars.
	MatchedPods int32 `json:"matchedPods"`
	// UpdatedPods is how many of them run the latest revision of the sidecars.
	UpdatedPods int32 `json:"updatedPods"`
	// ReadyPods is how many of them are ready.
	ReadyPods int32 `json:"readyPods"`
	// UpdatedReadyPods is how many of them run the latest revision and are ready.
	// +optional
	UpdatedReadyPods int32 `json:"updatedReadyPods,omitempty"`
	// LatestRevision is the name of the ControllerRevision of the current spec.
	// +optional
	LatestRevision string `json:"latestRevision,omitempty"`
	// CollisionCount counts hash collisions of revision names, to make the next name unique.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`
	// NotInjectedPods is how many pods the SidecarSet selects run without its sidecars: created
	// before it, while its injection was paused, or in the registration window of an earlier
	// version; recreate them to inject the sidecars. Kruise only (not in OpenKruise).
	// +optional
	NotInjectedPods int32 `json:"notInjectedPods,omitempty"`
	// Conditions: InjectionRegistered says whether the API server sends the pods the current
	// generation selects to Kruise for injection. Kruise only (not in OpenKruise).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SidecarSetInjectionRegistered is the condition type that says whether the injection webhook
// entry of the SidecarSet's current generation is in place.
const SidecarSetInjectionRegistered = "InjectionRegistered"

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="MATCHED",type="integer",JSONPath=".status.matchedPods",description="Pods that carry the sidecars."
// +kubebuilder:printcolumn:name="UPDATED",type="integer",JSONPath=".status.updatedPods",description="Pods that run the latest sidecars."
// +kubebuilder:printcolumn:name="READY",type="integer",JSONPath=".status.readyPods",description="Pods that carry the sidecars and are ready."
// +kubebuilder:printcolumn:name="REGISTERED",type="string",JSONPath=".status.conditions[?(@.type=='InjectionRegistered')].status",description="Whether the pods it selects are sent to Kruise for injection."
// +kubebuilder:printcolumn:name="NOT-INJECTED",type="integer",JSONPath=".status.notInjectedPods",description="Pods it selects that run without its sidecars."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the object was created."

// SidecarSet injects sidecar containers into the pods it selects when they are created, and updates
// the injected sidecars in place when it changes.
type SidecarSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec defines the sidecars and the pods they go into.
	Spec SidecarSetSpec `json:"spec,omitempty"`
	// Status reports the SidecarSet's progress.
	Status SidecarSetStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SidecarSetList is a list of SidecarSet objects.
type SidecarSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the SidecarSet objects.
	Items []SidecarSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SidecarSet{}, &SidecarSetList{})
}
