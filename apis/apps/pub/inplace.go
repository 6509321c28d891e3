package pub

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Readiness-gate condition types of the in-place update protocol.
const (
	// InPlaceUpdateReady is the readiness gate the workload controller adds to the pods it creates;
	// the in-place update engine sets it False before changing a pod and True when the change is done.
	InPlaceUpdateReady v1.PodConditionType = "InPlaceUpdateReady"
	// KruisePodReadyConditionType is the readiness gate the pod webhook adds to pods of Kruise
	// workloads; it is False while anything of Kruise holds the pod out of service.
	KruisePodReadyConditionType v1.PodConditionType = "KruisePodReady"
)

// Pod annotation keys of the in-place update protocol.
const (
	// InPlaceUpdateStateKey holds the JSON InPlaceUpdateState of the pod's last in-place update.
	InPlaceUpdateStateKey = "apps.kruise.io/inplace-update-state"
	// InPlaceUpdateGraceKey holds the in-place update that waits for its grace period to end.
	InPlaceUpdateGraceKey = "apps.kruise.io/inplace-update-grace"
	// RuntimeContainerMetaKey holds the JSON RuntimeContainerMetaSet kruise-daemon reports.
	RuntimeContainerMetaKey = "apps.kruise.io/runtime-containers-meta"
	// ContainerLaunchPriorityKey on a pod asks for its containers to start in order ("Ordered").
	ContainerLaunchPriorityKey = "apps.kruise.io/container-launch-priority"
	// ContainerLaunchPriorityEnvName is the env var whose value orders a container's launch.
	ContainerLaunchPriorityEnvName = "KRUISE_CONTAINER_PRIORITY"
)

// InPlaceUpdateStrategy tunes how an in-place update is applied to each pod.
type InPlaceUpdateStrategy struct {
	// GracePeriodSeconds is how long a pod stays NotReady before its containers are changed, so that
	// endpoint controllers remove it from Services first.
	// +optional
	GracePeriodSeconds int32 `json:"gracePeriodSeconds,omitempty"`
}

// InPlaceUpdateState is what the engine records on a pod (annotation InPlaceUpdateStateKey) about its
// last in-place update: enough to decide completion after a restart of the manager.
type InPlaceUpdateState struct {
	// Revision is the revision the pod is being updated to.
	Revision string `json:"revision"`
	// UpdateTimestamp is when the update was applied.
	UpdateTimestamp metav1.Time `json:"updateTimestamp"`
	// LastContainerStatuses records each updated container's image ID before the update.
	LastContainerStatuses map[string]InPlaceUpdateContainerStatus `json:"lastContainerStatuses"`
	// UpdateImages is true when the update changed container images.
	UpdateImages bool `json:"updateImages,omitempty"`
	// UpdateResources is true when the update changed container resources.
	UpdateResources bool `json:"updateResources,omitempty"`
	// UpdateEnvFromMetadata is true when the update changed env values taken from pod metadata.
	UpdateEnvFromMetadata bool `json:"updateEnvFromMetadata,omitempty"`
	// NextContainerImages are images of containers in later launch-priority batches, still to apply.
	NextContainerImages map[string]string `json:"nextContainerImages,omitempty"`
	// NextContainerResources are resources of containers in later batches, still to apply.
	NextContainerResources map[string]v1.ResourceRequirements `json:"nextContainerResources,omitempty"`
	// NextContainerRefMetadata are containers of later batches to restart for the metadata their env
	// reads (the metadata as it was, by container name), still to restart.
	NextContainerRefMetadata map[string]metav1.ObjectMeta `json:"nextContainerRefMetadata,omitempty"`
	// PreCheckBeforeNext lists what must hold before the next batch is applied.
	PreCheckBeforeNext *InPlaceUpdatePreCheckBeforeNext `json:"preCheckBeforeNext,omitempty"`
	// ContainerBatchesRecord lists the batches applied so far.
	ContainerBatchesRecord []InPlaceUpdateContainerBatch `json:"containerBatchesRecord,omitempty"`
}

// InPlaceUpdateContainerStatus is a container's state recorded before an in-place update.
type InPlaceUpdateContainerStatus struct {
	// ImageID is the image the container ran before the update.
	ImageID string `json:"imageID,omitempty"`
	// Resources are the container's resources before the update.
	Resources v1.ResourceRequirements `json:"resources,omitempty"`
	// PlainHash is the kubelet's hash of the container's spec before the update, as kruise-daemon
	// reported it (RuntimeContainerMetaKey); 0 when there was no report. A Kruise addition: with it a
	// container restarted on an image of the same digest under another tag is seen as updated.
	PlainHash uint64 `json:"plainHash,omitempty"`
	// ContainerID is the container's ID before the update, recorded for a container restarted only
	// to read changed labels or annotations into its env (UpdateEnvFromMetadata): its update is
	// complete once another container runs. A Kruise addition.
	ContainerID string `json:"containerID,omitempty"`
}

// InPlaceUpdatePreCheckBeforeNext lists what must hold before the next container batch starts.
type InPlaceUpdatePreCheckBeforeNext struct {
	// ContainersRequiredReady must be ready before the next batch is applied.
	ContainersRequiredReady []string `json:"containersRequiredReady,omitempty"`
}

// InPlaceUpdateContainerBatch is one applied batch of a multi-batch in-place update.
type InPlaceUpdateContainerBatch struct {
	// Timestamp is when the batch was applied.
	Timestamp metav1.Time `json:"timestamp"`
	// Containers are the containers the batch changed.
	Containers []string `json:"containers"`
}

// RuntimeContainerMetaSet is what kruise-daemon reports about a pod's containers as the runtime
// sees them (annotation RuntimeContainerMetaKey).
type RuntimeContainerMetaSet struct {
	// Containers holds one entry per container of the pod.
	Containers []RuntimeContainerMeta `json:"containers"`
}

// RuntimeContainerMeta is one container as the runtime sees it.
type RuntimeContainerMeta struct {
	// Name is the container's name in the pod spec.
	Name string `json:"name"`
	// ContainerID is the runtime's container ID.
	ContainerID string `json:"containerID"`
	// RestartCount is the runtime's restart count of the container.
	RestartCount int32 `json:"restartCount"`
	// Hashes are the kubelet's hashes of the container spec the runtime runs.
	Hashes RuntimeContainerHashes `json:"hashes"`
}

// RuntimeContainerHashes are the kubelet's hashes of a running container's spec.
type RuntimeContainerHashes struct {
	// PlainHash is the kubelet's hash of the whole container spec.
	PlainHash uint64 `json:"plainHash"`
}
