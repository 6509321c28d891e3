// Package broadcastjob runs BroadcastJobs (apps.kruise.io, v1beta1 stored): one pod from the job's
// template on every node that takes it, run to completion, as OpenKruise v1.9.0 runs them, so that
// either manager can take over the other's jobs and pods.
//
// Pods are made as OpenKruise makes them (NewPod): generateName "<job>-", the template's labels,
// annotations and finalizers, plus the labels broadcastjob-name=<job> and
// broadcastjob-controller-uid=<job UID>, the job as controller owner reference (apps.kruise.io/v1beta1,
// blockOwnerDeletion), and the template's required node affinity replaced by one term selecting the
// node by name (matchFields metadata.name, nodeeligibility.PinToNode): the scheduler binds the pod,
// as with OpenKruise's default --assign-bcj-pods-by-scheduler=true (it never sets spec.nodeName).
//
// Each reconcile observes the job, the nodes and the job's pods, plans (Compute, pure) and applies
// the plan (apply.go, the only writer). Invariants of every plan:
//   - Eligibility is pkg/core/nodeeligibility's, with resources checked: a node without a pod of the job
//     gets one only when the template's verdict is Run; a node whose pod's own spec no longer has
//     the verdict Continue (an untolerated NoExecute taint, a node selector that stopped matching,
//     allocatable too small; for a pod not yet bound, anything short of Run) has the pod deleted
//     and leaves the desired count. A node cordoned or tainted NoSchedule keeps a pod already bound
//     to it (OpenKruise deletes it; see docs/broadcastjob.md).
//   - At most one pod per node: a node gets a pod only while it has none, the cache showing every
//     earlier create and delete (podcontrol.Expectations). A failed pod is never replaced.
//   - Parallelism: pods are created only while fewer than parallelism (a count, or a percentage of
//     the desired nodes rounded up; unset: no limit) are active (not ended, not being deleted, not
//     failed by the restart limit).
//   - A pod with restartPolicy OnFailure whose containers restarted more than
//     failurePolicy.restartLimit times in total counts as failed (OpenKruise's per-pod rule).
//   - Failed pods: FailFast fails the job; Pause holds it (phase paused, no new pods, no
//     completion) while any failed pod exists; Continue goes on. spec.paused holds it too.
//   - completionPolicy Always: the job completes once every desired node has a pod that ended (or
//     failed by the restart limit), and fails once activeDeadlineSeconds have passed since
//     status.startTime (paused or not). A failing job deletes the pods that have not ended and
//     counts them failed. A finished job is never acted on again, except that it is deleted
//     ttlSecondsAfterFinished after status.completionTime. completionPolicy Never never completes
//     (only FailFast can fail it): new and newly eligible nodes get pods for as long as it runs.
//   - Status follows OpenKruise: phase running/paused/completed/failed, conditions Complete or Failed
//     (status True, reason equal to the type) appended once, at the end.
package broadcastjob
