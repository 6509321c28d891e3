// Package cli is kubectl-kruise, the kubectl plugin for Kruise workloads: rollout
// status/pause/resume/history/undo/restart/plan and set image/env/resources/serviceaccount for
// CloneSets, Advanced StatefulSets and Advanced DaemonSets (one code path, through the workload
// interface), set image for SidecarSets, scaledown and migrate for CloneSets, subsets for
// UnitedDeployments and WorkloadSpreads, create ContainerRecreateRequest/broadcastJob/job, expose, and
// exec (streamed as kubectl exec; -S names a sidecar's working container). It
// takes kubectl's connection flags (--kubeconfig, --context, -n, ...) through cli-runtime,
// resolves a workload's TYPE from the API server's discovery as kubectl does, and takes the
// command lines of OpenKruise's kubectl-kruise (kruise-tools) where Kruise has their behaviour,
// refusing the others naming Kruise's equivalent.
package cli
