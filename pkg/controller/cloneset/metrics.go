package cloneset

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/rolloutmetrics"
)

// cacheLagReads counts the reconciles that read a CloneSet's pods from the API server because the
// cache had not shown the controller's own writes within workloadloop.ExpectationTimeout: a lagging informer
// (or a write undone at once), which stalls rollouts while the cache catches up.
var cacheLagReads = prometheus.NewCounter(prometheus.CounterOpts{Name: "kruise_cloneset_cache_lag_reads_total",
	Help: "CloneSet reconciles that checked their pod writes against the API server: the cache had not shown them within the expectation timeout."})

func init() {
	metrics.Registry.MustRegister(cacheLagReads)
}

func workload(namespace, name string) rolloutmetrics.Workload {
	return rolloutmetrics.Workload{Kind: "CloneSet", Namespace: namespace, Name: name}
}

// reportMetrics sets the CloneSet's gauges from the status just computed and, when this status ends
// a rollout (the current revision becomes the update revision), records how long it took: since
// this manager saw the update revision change, or, when it did not (it started during the
// rollout), since the update revision was created.
func (r *Reconciler) reportMetrics(cs *v1alpha1.CloneSet, obs *observation, status v1alpha1.CloneSetStatus, now time.Time) {
	key := cs.Namespace + "/" + cs.Name
	if status.UpdateRevision != cs.Status.UpdateRevision && cs.Status.UpdateRevision != "" {
		r.rolloutStarts.Store(key, now)
	}
	want := ptr.Deref(cs.Spec.Replicas, 1)
	w := workload(cs.Namespace, cs.Name)
	w.Set(rolloutmetrics.Counts{Replicas: want, Ready: status.ReadyReplicas, Updated: status.UpdatedReplicas,
		UpdatedReady: status.UpdatedReadyReplicas, Unavailable: max(want-status.AvailableReplicas, 0),
		Stuck: progressReason(status.Conditions) == ReasonProgressDeadlineExceeded})
	before := cs.Status.CurrentRevision
	if before != "" && before != status.CurrentRevision && status.CurrentRevision == status.UpdateRevision && obs.updateRevision != nil &&
		obs.updateRevision.Name == status.UpdateRevision {
		start := obs.updateRevision.CreationTimestamp.Time
		if t, ok := r.rolloutStarts.LoadAndDelete(key); ok {
			start = t.(time.Time)
		}
		w.RolloutDone(now.Sub(start))
	}
}
