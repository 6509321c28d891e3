// Package cli is kubectl-kruise, the kubectl plugin for Kruise workloads: rollout
// status/pause/resume/history/undo/restart/plan and set image for CloneSets and Advanced
// StatefulSets, and all of them but plan for Advanced DaemonSets (one code path, through the
// workload interface), scaledown and migrate for CloneSets, and subsets for UnitedDeployments and
// WorkloadSpreads. It takes kubectl's connection flags (--kubeconfig, --context, -n, ...) through
// cli-runtime.
package cli
