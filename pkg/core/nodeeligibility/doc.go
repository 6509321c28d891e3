// Package nodeeligibility decides which nodes a per-node workload (Advanced DaemonSet,
// BroadcastJob) runs a pod on, as the scheduler's filters would decide it for the pod the
// workload would create there. It is pure: a node and a pod spec in, a verdict with its reason
// out. The matching itself is Kubernetes' (k8s.io/component-helpers), not a copy.
//
// Rules (those of Kubernetes' DaemonSet controller, and of OpenKruise's BroadcastJob where noted):
//   - A pod spec naming another node (spec.nodeName) never runs on this one.
//   - spec.nodeSelector and required node affinity must match the node's labels and fields.
//   - An untolerated NoSchedule taint (spec.unschedulable counts as the taint
//     node.kubernetes.io/unschedulable:NoSchedule, as the scheduler's NodeUnschedulable filter
//     reads it) keeps a new pod off the node but lets a running one stay; an untolerated NoExecute
//     taint does both.
//   - Resources are checked only when asked (BroadcastJob): the pod's requests must fit the node's
//     allocatable, as OpenKruise checks them (against the empty node: other pods are not counted).
//     DaemonSets never check resources, as the DaemonSet controller does not.
//   - DaemonTolerations adds the tolerations every daemon pod carries (not-ready, unreachable,
//     disk/memory/pid pressure, unschedulable, and network-unavailable for host-network pods).
package nodeeligibility
