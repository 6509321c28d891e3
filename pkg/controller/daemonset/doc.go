// Package daemonset holds the Advanced DaemonSet controller (apps.kruise.io DaemonSet, v1beta1):
// one pod per eligible node, updated in place where it can be. Compute is its pure planner: it
// turns a Snapshot (the defaulted spec, the update revision, the in-place decision per source
// revision, and per node its eligibility verdict, labels and daemon pods) and the time into a Plan
// of creates, deletes and updates, each with a reason, notes on what it waits for and the next
// time it may change. ComputeStatus is its pure counterpart for status. Which nodes run a pod is
// decided by pkg/core/nodeeligibility; all writes go through pkg/machinery/podcontrol, in-place updates through
// pkg/machinery/engine.
//
// Invariants of every plan (checked after each step of TestPlanSequences):
//   - One pod per node: a node that should run a daemon pod and has none gets one (unless its
//     last pod failed less than its back-off ago); a node with more than one keeps the oldest
//     (during a surge update: the oldest old pod and the oldest updated pod). Never two daemon
//     pods on a node except during a surge update.
//   - Eligibility: pods on nodes where the pod may not continue (no longer selected, untolerated
//     NoExecute taint) and pods pinned to nodes that no longer exist are deleted; an untolerated
//     NoSchedule taint only stops new pods. Failed and succeeded pods are deleted and replaced.
//   - burstReplicas bounds the creates, and the deletes, of one plan; with
//     scaleStrategy.partitionedScaling at most desired − partition nodes get a pod.
//   - Partition and selector: nodes are taken by descending name, those already updated first,
//     then (with rollingUpdate.selector) only nodes whose labels match; at most
//     desired − partition nodes run the update revision through the rolling update.
//   - Roll back (kruise#1871, Kruise's default; Reconciler.KeepUnselected keeps OpenKruise's
//     behaviour): with rollingUpdate.selector, a node the selector does not select whose pods
//     run the update revision or the current one (what most old pods run) is moved to the
//     current revision, within the same bounds, and gets new pods of it. Nodes running a third
//     revision are left alone.
//   - Availability: without surge an update makes an available pod unavailable only while fewer
//     than maxUnavailable nodes are unavailable (pods unavailable already are updated at no cost);
//     with maxSurge the new pod is created beside the old one on at most maxSurge nodes at once,
//     and the old pod is deleted once the new one is available.
//   - In place: InPlaceIfPossible (without surge) never recreates a pod that can be updated in
//     place.
//   - Lifecycle: a pod the preDelete or inPlaceUpdate hook holds moves to PreparingDelete or
//     PreparingUpdate instead of being deleted or updated, and is released when the action is no
//     longer needed.
//   - Paused and OnDelete: no pod is updated; nodes still get their pods.
package daemonset
