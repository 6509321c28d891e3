// Package workloadfinder answers, for the kinds that protect, spread or pin pods
// (PodUnavailableBudget, WorkloadSpread, PersistentPodState), which pods a workload owns and how
// many it wants: for a reference to a workload (targetRef), its pod selector, desired replicas and pods;
// for a set of pods, the replicas their workloads want together.
//
// Deployments (through their ReplicaSets), ReplicaSets, StatefulSets, CloneSets, Advanced
// StatefulSets and Jobs (their parallelism as replicas) are read from the cache; any other kind is read through its scale subresource
// (spec.replicas and status.selector), as OpenKruise's controller finder does. Which custom kinds
// a WorkloadSpread or a PersistentPodState may target is the whitelist of the kruise-configuration
// ConfigMap (CustomWorkloads).
package workloadfinder
