// Package podcontrol is the one writer of workload pods shared by CloneSet, Advanced
// StatefulSet, Advanced DaemonSet, SidecarSet, BroadcastJob and UnitedDeployment: it creates a pod of a revision with its readiness
// gates open, deletes a pod only if it is still the one planned on, moves a pod through its
// lifecycle states, starts and moves on in-place updates through pkg/machinery/engine, creates and
// prunes ControllerRevisions and writes a workload's status. Each write is recorded in
// Expectations before it is sent, so no plan is made from a cache that does not show it yet.
//
// Invariants:
//   - Every pod it creates carries the revision labels, the lifecycle state, the controller
//     reference and the InPlaceUpdateReady (and, for Kruise workloads, KruisePodReady) readiness
//     gates, opened by one status write (held False instead when a preNormal hook marks the pod
//     not ready).
//   - A delete or an in-place update names the pod's UID or the revision and images it was
//     planned against: a pod replaced or changed meanwhile is never touched.
//   - Successful writes of one reconcile make one event per kind (Batch); failures one each.
//
// The workload packages decide what to write (their pure planners); this package only writes.
package podcontrol
