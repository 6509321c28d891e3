// Package sidecarterminator ends the pods of jobs whose main containers are done while their
// sidecars would run forever, as OpenKruise v1.9.0's SidecarTerminator does. A sidecar is a
// container with env KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true (or
// KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE set); the others are the main containers.
//
// For a pod with restartPolicy Never whose main containers have all exited (OnFailure: all exited
// 0) while a sidecar has not, the controller writes the pod's phase — Succeeded when every main
// container exited 0, Failed otherwise — with the condition SidecarTerminated, so that the kubelet
// stops the remaining containers and never starts them again, and asks kruise-daemon to stop the
// sidecars through a ContainerRecreateRequest named sidecar-termination-<pod UID> (force, failure
// policy Ignore). The Job then counts the pod as it ended.
package sidecarterminator
