// Package cloneset holds the CloneSet controller. This part is its pure planner: Compute turns a
// Snapshot (the spec, the current and update revisions, the in-place decision per source revision
// and one PodFacts per owned pod) and the time into a Plan: pods to create (with their revision),
// pods to delete, pods to update in place or by recreate, each with a reason, notes on waits, and
// the next deadline at which the plan may change. No API calls, no clock, no globals.
// ComputeStatus is its pure counterpart for status: counters over the same snapshot, the
// current-revision rule and the FailedScale/FailedUpdate conditions from the apply step's errors.
//
// Terms: active pods are those not terminating; available pods are ready, not in an in-place
// update and ready for minReadySeconds; old pods are not at the update revision; specified pods are
// named in scaleStrategy.podsToDelete or labelled apps.kruise.io/specified-delete. An Update with
// mode Recreate is carried out by deleting the pod; a later plan creates its replacement.
//
// Invariants of every plan (checked after each step of TestRolloutSequences):
//   - Availability: apart from scale-in, the plan makes available pods unavailable (deletes or
//     updates them) only while more than replicas − maxUnavailable pods stay available; pods
//     already unavailable are updated or deleted first and at no cost.
//   - Size: active pods after the plan never exceed replicas + maxSurge; surge pods exist only
//     while old pods above the partition (or specified pods) wait to be replaced, and scale-in
//     never leaves fewer than replicas active pods.
//   - Partition: the plan never updates an old pod when that would leave fewer than partition old
//     pods, never deletes old pods below the partition by scaling in, and creates current-revision
//     pods only to make up the partition. A raised partition rolls nothing back.
//   - In place: no pod is recreated when pkg/core/inplace allows an in-place update and the update type
//     is InPlaceIfPossible or InPlaceOnly; InPlaceOnly never recreates, it refuses (Plan.Refusals).
//   - Paused: no pod is updated; scaling (and replacing specified pods) goes on.
//   - Convergence: with a fixed spec and pods that become ready, repeated plans reach replicas
//     active pods, at least replicas − partition of them at the update revision.
//
// TestRolloutSequencesLaggingCache checks Availability and Size on the true pods while the planner
// reads a cache lagging up to six times the expectation timeout, through the Reconciler's
// Expectations: a plan is made only from a cache that shows the controller's own writes.
package cloneset
