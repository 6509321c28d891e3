package prober

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	results = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kruise_daemon_pod_probe_results_total",
		Help: "PodProbeMarker probe runs on this node, by namespace, probe (<marker>#<probe>) and result (succeeded, failed, container_missing)."},
		[]string{"namespace", "probe", "result"})
	latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kruise_daemon_pod_probe_duration_seconds",
		Help:    "Time a PodProbeMarker probe took to run on this node, by namespace and probe.",
		Buckets: []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"namespace", "probe"})
)

// Collectors are the probe metrics, for the daemon's registry.
func Collectors() []prometheus.Collector { return []prometheus.Collector{results, latency} }

func observe(t target, r Result, took time.Duration) {
	results.WithLabelValues(t.namespace, t.probe, r.String()).Inc()
	if r != Missing {
		latency.WithLabelValues(t.namespace, t.probe).Observe(took.Seconds())
	}
}
