// Package workloadspread runs WorkloadSpreads (OpenKruise v1.9.0): it recounts each subset from
// the pods (their apps.kruise.io/matched-workloadspread annotation), settles the records the pod
// webhook (pkg/webhook/spreadplacement) keeps of creations and deletions it admitted, sets the
// pod-deletion-cost that makes the workload's scale-in empty the right subsets first, places the
// workload's pods that were running before the spread existed, and, under the Adaptive strategy,
// marks a subset whose pods cannot be scheduled unschedulable for a while and deletes those pods so
// that the workload recreates them, which the webhook then places in the next subset.
//
// Invariants:
//   - The pods counted are the workload's and, until they are gone, the live pods the spread placed
//     that a workload of the targetRef's kind and name (any UID: one deleted, or created again)
//     controls: the webhook records their deletions as freeing replicas, so leaving them out
//     earlier would free those replicas twice.
//   - subsetStatuses count the spread's pods of every revision; versionedSubsetStatuses count them
//     per revision (pod-template-hash) for Deployments and ReplicaSets, under "versionIgnored"
//     for other kinds. The webhook reads and writes only the versioned statuses.
//   - A creation record is dropped once its pod is seen or after 30 s; a deletion record once its
//     pod is gone or after 15 s (with a warning event); until then missingReplicas counts them.
//   - The status has two writers, this controller and the webhook; both write with the object's
//     resourceVersion, so neither overwrites the other.
//   - The last subset is never marked unschedulable, and its pods are never deleted.
package workloadspread
