// Package containeraction runs a container's handler as the kubelet runs probes and hooks: an exec
// through CRI in the container, an HTTP GET or a TCP connect to the pod. kruise-daemon uses it for
// the preStop hooks of recreated containers (pkg/node/restarter) and for PodProbeMarker probes
// (pkg/node/prober).
package containeraction
