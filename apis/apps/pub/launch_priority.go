package pub

// Container launch priority: the pod webhook gives every container of a pod that asks for an order
// (ContainerLaunchPriorityKey "Ordered", or ContainerLaunchPriorityEnvName) an env var
// ContainerLaunchBarrierEnvName read from key BarrierKeyPrefix+<priority> of the ConfigMap
// <pod name>+BarrierConfigMapSuffix; the kubelet cannot start a container before its key exists.
const (
	// ContainerLaunchOrdered is the value of ContainerLaunchPriorityKey that orders the containers
	// as listed, the first highest.
	ContainerLaunchOrdered = "Ordered"
	// ContainerLaunchBarrierEnvName is the env var the pod webhook injects into each container.
	ContainerLaunchBarrierEnvName = "KRUISE_CONTAINER_BARRIER"
	// BarrierConfigMapSuffix follows the pod's name in the name of its barrier ConfigMap.
	BarrierConfigMapSuffix = "-barrier"
	// BarrierKeyPrefix precedes the priority in the barrier's keys (p_1, p_0, p_-1).
	BarrierKeyPrefix = "p_"
	// ContainerLaunchPriorityCompletedKey is set to "true" on a pod once every priority of it is
	// released in its barrier.
	ContainerLaunchPriorityCompletedKey = "apps.kruise.io/container-launch-priority-completed"
)
