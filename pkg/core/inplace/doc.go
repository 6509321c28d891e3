// Package inplace decides whether a pod can move from one revision of a workload's pod template to
// another by an in-place update, and if so what that update changes. It is the pure first stage of the
// in-place update engine shared by CloneSet, Advanced StatefulSet and Advanced DaemonSet: no API calls,
// no clock, no globals. Plan decides an update, and
// Observe/Inspect read how far one got from the pod alone; DecideWait and KubeletRecord.ObserveWait learn, per
// node, how long to wait for its kubelet to report a pod not Ready (kubelet.go); pkg/machinery/engine carries
// the protocol out on live pods (the Engine interface: CanUpdateInPlace, Update, UpdateAll, Refresh).
//
// Guarantees of Plan:
//   - Exactly one outcome: a Decision carries either an UpdateSpec or at least one recreate reason.
//   - In place only when the two templates differ in nothing but container images, template labels and
//     annotations, and (with Options.VerticalScaling) the CPU/memory requests and limits of containers.
//     Every other difference, including pod-spec fields added by future Kubernetes versions, forces a
//     recreate, because the comparison masks the allowed fields and compares everything else. Within the
//     allowed fields, a resize that would change the pod's QoS class, a changed
//     kubectl.kubernetes.io/restartedAt annotation, and a changed key read by a sidecar init container's
//     env still force a recreate: none of them can be honoured on the live pod.
//   - Every recreate reason names the field path that forced it, e.g. "spec.volumes changed" or
//     `spec.containers[app].command changed`; reasons come in a stable order (metadata, then pod-spec
//     fields in API order, then containers in template order).
//   - Containers are matched by name, never by index.
//   - Keys that controllers own on live pods (ManagedKey) never appear in the metadata diff, and a key
//     whose value is equal in both templates is never touched, so labels and annotations added to the
//     live pod by others survive the update.
//   - The UpdateSpec shares no memory with its inputs, and Plan never modifies its inputs.
//   - Plan never panics, whatever the input (fuzzed by FuzzPlanNeverPanics).
package inplace
