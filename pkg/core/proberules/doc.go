// Package proberules is what PodProbeMarker means, as pure functions shared by kruise-manager and
// kruise-daemon: which pods a marker probes, the NodePodProbe spec of a node (each probe named
// "<marker>#<probe>", named ports resolved against the pod's container, as OpenKruise v1.9.0
// writes it), and the conditions, labels and annotations a pod carries from its probes' states.
package proberules
