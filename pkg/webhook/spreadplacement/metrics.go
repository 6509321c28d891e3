package spreadplacement

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// How a placement was answered: the label of kruise_workloadspread_placement_seconds.
const (
	// answeredFromMemory: decided here, the status written behind.
	answeredFromMemory = "memory"
	// answeredAfterWrite: decided here, answered once the status write went through.
	answeredAfterWrite = "write"
	// answeredByDecider: passed on to the deciding replica, answered there.
	answeredByDecider = "forwarded"
)

// placementSeconds is the time Kruise takes to place one pod (kruise-manager's side of the
// webhook call: the API server's own share is apiserver_admission_webhook_admission_duration_seconds).
var placementSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "kruise_workloadspread_placement_seconds",
	Help:    "Time kruise-manager takes to place a pod into a WorkloadSpread subset, by how it was answered: memory (status written behind), write (status written first) or forwarded (answered by the deciding replica).",
	Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
}, []string{"answered"})

func init() { metrics.Registry.MustRegister(placementSeconds) }

// observePlacement records one placement that started at start.
func observePlacement(answered string, start time.Time) {
	placementSeconds.WithLabelValues(answered).Observe(time.Since(start).Seconds())
}
