// Package podprobemarker runs PodProbeMarkers in kruise-manager: it keeps one NodePodProbe per node
// listing the probes of the pods on it (kruise-daemon runs them and writes their states into the
// NodePodProbe's status), turns those states into the pods' conditions, labels and annotations, and
// keeps each marker's finalizer and status. Three reconcilers, one writer each: nodes (the
// NodePodProbes), pods (their marks), markers (their finalizer and status). What the probes mean is
// pkg/core/proberules.
package podprobemarker
