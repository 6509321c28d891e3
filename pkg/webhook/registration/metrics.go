package registration

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// admitSeconds is how long admissions waited for their entries, by configuration and outcome.
	admitSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kruise_webhook_registration_seconds",
		Help:    "Time an admission of an object with webhook entries of its own spent registering them until the API server called them, by configuration and result (confirmed, refused).",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"configuration", "result"})
	// probes counts the dry-run probes admissions made, by configuration.
	probes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kruise_webhook_registration_probes_total",
		Help: "Dry-run probes made to learn whether the API server calls newly registered webhook entries, by configuration."}, []string{"configuration"})
)

func init() { metrics.Registry.MustRegister(admitSeconds, probes) }
