// Package criruntime connects kruise-daemon to the node's container runtime over CRI v1
// (k8s.io/cri-client): the endpoint given, or the first well-known socket whose runtime answers.
package criruntime
