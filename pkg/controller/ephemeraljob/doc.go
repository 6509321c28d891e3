// Package ephemeraljob runs EphemeralJobs (apps.kruise.io/v1alpha1): it adds the job's ephemeral
// containers to running pods chosen by label and reports how they ran, as OpenKruise v1.9.0 does,
// so that either manager can take over the other's jobs.
//
// Each reconcile observes the job and the pods of its namespace its selector matches, plans
// (Compute, pure) and applies the plan (apply.go, the only writer of the job and of the pods'
// ephemeral containers). Invariants of every plan:
//   - Targets are Running pods not being deleted, at most spec.replicas of them: those the job
//     already injected first, then by creation time and name. A pod holding a container (of any
//     kind) named like one of the template's that the job did not inject is never a target; the
//     plan reports it as a conflict.
//   - A container is the job's when it carries env KRUISE_EJOB_ID = the job's UID (OpenKruise's
//     mark); a pod holding one is never injected again.
//   - At most spec.parallelism (unset: 1) injected pods are in flight (their containers neither
//     all succeeded nor any failed); new pods are injected only below that, never while paused,
//     finished or past the deadline.
//   - A job is finished once status.completionTime is set, and then never acted on again, except
//     that it is deleted ttlSecondsAfterFinished (unset: 1800) after completionTime. It finishes
//     when every target ended (Succeeded when none failed, otherwise Failed — mixed outcomes
//     included, unlike OpenKruise) or when activeDeadlineSeconds passed since status.startTime
//     while not paused (Failed, reason DeadlineExceeded).
//   - Status is written only when it changed (condition times move only when a condition does).
package ephemeraljob
