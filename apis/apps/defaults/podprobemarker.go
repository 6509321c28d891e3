package defaults

import "github.com/kruise-ng/kruise/apis/apps/v1alpha1"

// SetDefaultsPodProbeMarker applies the PodProbeMarker defaults (oracle:
// apps.kruise.io_podprobemarkers.yaml), to spec.probes[].probe:
//   - timeoutSeconds: 1 ("Defaults to 1 second. Minimum value is 1.")
//   - periodSeconds: 10 ("Default to 10 seconds. Minimum value is 1.")
//   - successThreshold: 1 ("Defaults to 1. ... Minimum value is 1.")
//   - failureThreshold: 3 ("Defaults to 3. Minimum value is 1.")
//   - httpGet.scheme: HTTP, when httpGet is given ("Defaults to HTTP.")
//   - grpc.service: "", when grpc is given (structural default `default: ""`)
//
// The thresholds are non-pointer ints with a minimum of 1, so a 0 there is
// taken as "not given".
func SetDefaultsPodProbeMarker(obj *v1alpha1.PodProbeMarker) {
	for i := range obj.Spec.Probes {
		setProbeDefaults(&obj.Spec.Probes[i].Probe)
	}
}
