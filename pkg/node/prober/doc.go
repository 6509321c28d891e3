// Package prober runs its node's PodProbeMarker probes in kruise-daemon: one worker per probe of
// each pod its NodePodProbe lists, at the probe's period after its initial delay, a bounded number
// running at once, each result counted against the probe's thresholds as the kubelet counts them;
// the states go into the NodePodProbe's status (the daemon is its status's only writer), which the
// manager turns into the pods' marks.
package prober
