package rolloutmetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var workloadLabels = []string{"kind", "namespace", "name"}

func gauge(name, help string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, workloadLabels)
}

var (
	replicas     = gauge("kruise_workload_replicas", "Pods the workload wants (spec.replicas).")
	ready        = gauge("kruise_workload_ready_replicas", "Pods of the workload that are Ready.")
	updated      = gauge("kruise_workload_updated_replicas", "Pods of the workload at the update revision.")
	updatedReady = gauge("kruise_workload_updated_ready_replicas", "Pods at the update revision that are Ready.")
	unavailable  = gauge("kruise_workload_unavailable_replicas", "Pods the workload wants that are not available.")
	stuck        = gauge("kruise_workload_rollout_stuck",
		"1 while the workload's rollout is past its progress deadline (condition Progressing, reason ProgressDeadlineExceeded), else 0.")
	podUpdates = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kruise_workload_pod_updates_total",
		Help: "Pods moved to a new revision, by method: in_place or recreate."}, append(workloadLabels, "method"))
	inPlaceFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kruise_workload_inplace_update_failures_total",
		Help: "In-place updates the API server refused (retried)."}, workloadLabels)
	rolloutDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kruise_workload_rollout_duration_seconds",
		Help:    "Time from the update revision's creation to the end of its rollout (every pod updated and ready).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 14)}, []string{"kind"})
)

func init() {
	metrics.Registry.MustRegister(replicas, ready, updated, updatedReady, unavailable, stuck, podUpdates, inPlaceFailures, rolloutDuration)
}

// Update methods.
const (
	InPlace  = "in_place"
	Recreate = "recreate"
)

// Workload names one workload's series.
type Workload struct{ Kind, Namespace, Name string }

func (w Workload) values() []string { return []string{w.Kind, w.Namespace, w.Name} }

// Counts are the gauges of a workload; Stuck says its rollout is past its progress deadline.
type Counts struct {
	Replicas, Ready, Updated, UpdatedReady, Unavailable int32
	Stuck                                               bool
}

// Set sets w's gauges.
func (w Workload) Set(c Counts) {
	v := w.values()
	replicas.WithLabelValues(v...).Set(float64(c.Replicas))
	ready.WithLabelValues(v...).Set(float64(c.Ready))
	updated.WithLabelValues(v...).Set(float64(c.Updated))
	updatedReady.WithLabelValues(v...).Set(float64(c.UpdatedReady))
	unavailable.WithLabelValues(v...).Set(float64(c.Unavailable))
	stuckValue := 0.0
	if c.Stuck {
		stuckValue = 1
	}
	stuck.WithLabelValues(v...).Set(stuckValue)
}

// PodUpdated counts one pod moved to a new revision by method.
func (w Workload) PodUpdated(method string) {
	podUpdates.WithLabelValues(append(w.values(), method)...).Inc()
}

// InPlaceFailed counts one refused in-place update.
func (w Workload) InPlaceFailed() { inPlaceFailures.WithLabelValues(w.values()...).Inc() }

// RolloutDone records a finished rollout that took d.
func (w Workload) RolloutDone(d time.Duration) {
	rolloutDuration.WithLabelValues(w.Kind).Observe(d.Seconds())
}

// Forget drops w's series (the workload is gone).
func (w Workload) Forget() {
	v := w.values()
	for _, g := range []*prometheus.GaugeVec{replicas, ready, updated, updatedReady, unavailable, stuck} {
		g.DeleteLabelValues(v...)
	}
	inPlaceFailures.DeleteLabelValues(v...)
	podUpdates.DeleteLabelValues(append(v, InPlace)...)
	podUpdates.DeleteLabelValues(append(v, Recreate)...)
}
