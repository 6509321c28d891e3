// Package statefulset holds the Advanced StatefulSet controller (apps.kruise.io StatefulSet,
// v1beta1). Compute is its pure planner: it turns a Snapshot (the defaulted spec, the current and
// update revisions, the in-place decision per source revision and one PodFacts per owned pod) and
// the time into a Plan of creates, deletes and updates, each with a reason, notes on what it waits
// for, and the next time it may change. ComputeStatus is its pure counterpart for status. All
// writes go through pkg/machinery/podcontrol, and in-place updates through pkg/machinery/engine.
//
// Terms: replicas are the ordinals ordinal.Replicas walks (from ordinals.start, skipping reserveOrdinals);
// a pod is healthy when it runs and is available (ready for minReadySeconds, in no in-place update
// or lifecycle action); condemned pods have an ordinal that is not a replica.
//
// Invariants of every plan (checked after each step of TestPlanSequences):
//   - Identity: at most one pod per ordinal (pods are named <set>-<ordinal>); a pod is created
//     only for a replica ordinal that has none.
//   - OrderedReady: pods are created by ascending ordinal, one at a time, each only once every
//     lower replica is healthy; condemned pods are deleted by descending ordinal, one at a time,
//     only while every replica is healthy. Updates wait for unhealthy replicas too, except for an
//     unhealthy replica the update is to move (the broken-pod trap, kubernetes#67250): it is
//     updated, at no cost, so that fixing a bad template is one apply.
//   - Partition: ordered, no replica below position partition (reserved ordinals not counted) is
//     updated; unordered, at least partition replicas keep their old revision.
//   - Availability: an update makes healthy replicas unhealthy only while fewer than
//     maxUnavailable replicas are unhealthy (with OrderedReady too, as upstream's
//     MaxUnavailableStatefulSet); replicas unhealthy already go first, then by descending ordinal.
//   - Lifecycle: a pod the preDelete or inPlaceUpdate hook holds is moved to PreparingDelete or
//     PreparingUpdate instead of being deleted or updated, and released when the action is no
//     longer needed.
//   - In place: InPlaceIfPossible and InPlaceOnly never recreate a pod that can be updated in
//     place; InPlaceOnly never recreates (Plan.Refusals).
//   - Paused and OnDelete: no pod is updated; scaling goes on.
//   - Bounds: a plan allocates for the pods that exist and at most
//     podcontrol.MaxCreatesPerReconcile creations, never for replicas or reserved ordinals
//     (FuzzPlan); a spec beyond pkg/core/ordinal's bounds is not planned at all (refusal.go).
package statefulset
