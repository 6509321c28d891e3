// Package containerlaunchpriority releases the launch barrier of the pods that ask for a container
// launch order (the pod webhook gave each of their containers the env KRUISE_CONTAINER_BARRIER,
// read from key p_<priority> of ConfigMap <pod>-barrier), as OpenKruise v1.9.0 does.
//
// Invariants:
//   - the key of a priority is released only once every container of a higher priority is ready
//     (containerStatuses[].ready); keys are only ever added, from the highest priority down;
//   - the barrier is created owned by its pod (the garbage collector removes it with the pod), and
//     recreated with the keys already released when it is deleted;
//   - a ConfigMap of that name that another pod, or no pod, owns is never written;
//   - once the lowest priority is released the pod is marked
//     apps.kruise.io/container-launch-priority-completed=true and its updates are no longer read.
package containerlaunchpriority
