package defaults

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// setProbeDefaults fills a PodProbeMarker/NodePodProbe probe. The four
// thresholds are plain int32 whose minimum is 1, so 0 can only mean unset.
func setProbeDefaults(p *v1alpha1.PodProbeMarkerProbeSpec) {
	defaultZeroInt32(&p.TimeoutSeconds, 1)
	defaultZeroInt32(&p.PeriodSeconds, 10)
	defaultZeroInt32(&p.SuccessThreshold, 1)
	defaultZeroInt32(&p.FailureThreshold, 3)
	if h := p.HTTPGet; h != nil {
		defaultString(&h.Scheme, corev1.URISchemeHTTP)
	}
	if g := p.GRPC; g != nil && g.Service == nil {
		empty := ""
		g.Service = &empty
	}
}
