package manager

import (
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kruise-ng/kruise/pkg/platform/metricsauth"
)

// The metrics filter authenticates scrapers' tokens and authorizes them with the API server.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// metricsOptions is how the manager serves /metrics: unless InsecureMetrics, over HTTPS behind
// pkg/platform/metricsauth's filter (a self-signed certificate unless MetricsCertDir holds one), else over
// plain HTTP to anyone.
func (o *Options) metricsOptions() metricsserver.Options {
	m := metricsserver.Options{BindAddress: o.MetricsAddr}
	if !o.InsecureMetrics {
		m.SecureServing = true
		m.FilterProvider = metricsauth.Filter
		m.CertDir = o.MetricsCertDir
	}
	return m
}
