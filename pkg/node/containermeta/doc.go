// Package containermeta reports, on each pod of the daemon's node that takes in-place updates,
// what the container runtime runs for it: the pod annotation apps.kruise.io/runtime-containers-meta
// lists each container's runtime ID, restart count and the kubelet's hash of its spec, as the
// runtime recorded them (the kubelet's container labels and annotations over CRI).
package containermeta
