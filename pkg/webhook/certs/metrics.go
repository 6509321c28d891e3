package certs

import (
	"github.com/prometheus/client_golang/prometheus"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// expiry is when the certificates this replica serves with expire, for an alert before they do
// (the rotator renews them RenewBefore their end; a certificate near its end means renewal fails).
var expiry = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kruise_webhook_certificate_expiry_timestamp_seconds",
	Help: "When the webhook certificate this kruise-manager replica serves with (certificate=serving) and its CA (certificate=ca) expire, in Unix seconds."},
	[]string{"certificate"})

func init() { metrics.Registry.MustRegister(expiry) }

// reportExpiry sets the expiry gauge from the PEM certificates b serves (the first of each).
func reportExpiry(b *Bundle) {
	for name, pemBytes := range map[string][]byte{"serving": b.ServingCert, "ca": b.CACert} {
		if certs, err := certutil.ParseCertsPEM(pemBytes); err == nil && len(certs) > 0 {
			expiry.WithLabelValues(name).Set(float64(certs[0].NotAfter.Unix()))
		}
	}
}
