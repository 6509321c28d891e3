// Package workloadloop is the one reconcile of the pod workloads (CloneSet, Advanced StatefulSet,
// Advanced DaemonSet): observe → wait for the controller's own writes → pure plan → apply in one
// order → image pre-download → status, with a per-kind Kind adapter for what differs.
//
// Invariants:
//   - No plan is made from a cache that does not show the controller's own writes
//     (podcontrol.Expectations); writes still missing after ExpectationTimeout are checked against
//     the API server.
//   - Every kind writes in the same order (Apply): revision, adoption, in-flight updates,
//     lifecycle moves, claims, deletions, claim expansions, updates, creations, release, the kind's
//     last step (the CloneSet adopts and releases there), pruning.
//   - Errors are returned after the status is written, so the status shows them: scale first, then
//     update, then pre-download.
package workloadloop
