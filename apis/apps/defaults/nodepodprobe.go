package defaults

import "github.com/kruise-ng/kruise/apis/apps/v1alpha1"

// SetDefaultsNodePodProbe applies the NodePodProbe defaults (oracle:
// apps.kruise.io_nodepodprobes.yaml), to spec.podProbes[].probes[].probe;
// the values are those of SetDefaultsPodProbeMarker: timeoutSeconds 1,
// periodSeconds 10, successThreshold 1, failureThreshold 3, httpGet.scheme
// HTTP (when httpGet is given), grpc.service "" (when grpc is given).
func SetDefaultsNodePodProbe(obj *v1alpha1.NodePodProbe) {
	for i := range obj.Spec.PodProbes {
		probes := obj.Spec.PodProbes[i].Probes
		for j := range probes {
			setProbeDefaults(&probes[j].Probe)
		}
	}
}
