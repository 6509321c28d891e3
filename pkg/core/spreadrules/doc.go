// Package spreadrules holds the pure decisions of WorkloadSpread (OpenKruise v1.9.0): which
// subset a new pod is admitted into, the status bookkeeping of an admitted creation or deletion,
// and the pod-deletion-cost that makes a workload's scale-in empty the right subsets first. No
// API calls: plain counts and names in, decisions out; inputs are never modified. Placing a pod
// into its subset is pkg/core/subset's ApplyToPod, and a subset's schedulability is pkg/core/subset's Assess.
//
// Invariants:
//   - A subset's quota is maxReplicas: an integer as is, a percentage of the workload's replicas
//     rounded up; no maxReplicas means no limit, which the status writes as missingReplicas -1.
//   - A new pod goes to the first subset, in status order, that is not marked unschedulable
//     (Adaptive only) and whose missingReplicas is positive or -1; when none is, the pod is
//     admitted without a subset.
//   - An admission into a limited subset records the pod in creatingPods and lowers
//     missingReplicas (never below 0); a deletion or eviction records it in deletingPods and
//     raises missingReplicas (never above an integer maxReplicas). Unlimited subsets, and pods
//     already recorded anywhere, change nothing.
//   - Deletion costs: within its quota a pod of the i-th subset (0-based, of n) gets 100*(n-i);
//     the pods over the quota, most deletable first by Kubernetes' ActivePods order, get
//     -100*(i+1); pods in no subset get -100*(n+1). Older revisions count subsets in reverse.
//   - A subset's status is recounted from its pods (ComputeSubsetStatus): a creation record counts
//     until its pod shows up or for 30 s, a deletion record until its pod is gone or for 15 s.
//   - The pods of Deployments and ReplicaSets are counted per revision (PodVersion, their
//     pod-template-hash); every other kind's under VersionIgnored.
package spreadrules
