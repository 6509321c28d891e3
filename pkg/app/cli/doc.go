// Package cli is kubectl-kruise, the kubectl plugin for Kruise workloads: rollout
// status/pause/resume/history/undo/restart/plan and set image for CloneSets, Advanced
// StatefulSets and Advanced DaemonSets (one code path, through the workload interface), scaledown and migrate for CloneSets, and subsets for UnitedDeployments and
// WorkloadSpreads. It takes kubectl's connection flags (--kubeconfig, --context, -n, ...) through
// cli-runtime, resolves a workload's TYPE from the API server's discovery as kubectl does, and
// takes the command lines of OpenKruise's kubectl-kruise (kruise-tools) where Kruise has their
// behaviour, refusing the others naming Kruise's equivalent.
package cli
