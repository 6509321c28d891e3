// Package podgate owns the readiness gates of the pods of Kruise's workloads: which pods carry
// KruisePodReady (the pods whose controller is a Kruise workload that creates pods), adding it, and
// whether a pod carries a given gate — one rule for the pod webhook, the workloads' pod writer, the
// in-place engine and the pod-readiness controller.
package podgate
