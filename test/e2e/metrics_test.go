package e2e

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// scrape reads kruise-manager's metrics.
func scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	return scrapePort(t, sb.Ports.KruiseMetrics)
}

// scrapePort reads the metrics served on a loopback port of the shared sandbox, as its metrics
// scraper (a ServiceAccount bound to kruise-metrics-reader) over TLS.
func scrapePort(t *testing.T, port int) map[string]*dto.MetricFamily {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, err := sb.ScrapeMetrics(ctx, port)
	return parseMetrics(t, body, err)
}

// scrapeReplica reads a manager replica's metrics, as its own sandbox's metrics scraper.
func scrapeReplica(t *testing.T, r sandbox.ManagerReplica) map[string]*dto.MetricFamily {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, err := r.ScrapeMetrics(ctx)
	return parseMetrics(t, body, err)
}

// parseMetrics parses a scrape's body by family name; a failed scrape fails the test.
func parseMetrics(t *testing.T, body []byte, err error) map[string]*dto.MetricFamily {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// metricValue is the value of the sample of family name whose labels include want (gauge, counter,
// or a histogram's count); -1 when there is none.
func metricValue(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f, ok := fams[name]
	if !ok {
		return -1
	}
next:
	for _, m := range f.Metric {
		for k, v := range want {
			found := false
			for _, l := range m.Label {
				found = found || (l.GetName() == k && l.GetValue() == v)
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// The rollout metrics move with a rollout: the updated gauges go from 0 to all pods, every pod is
// counted as updated in place, the rollout's duration is observed, and the webhook latency and
// reconcile error series exist.
func TestRolloutMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas = 20
	clone := newCloneSet(ns, "metrics", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(5))
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "metrics", "all replicas ready", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ReadyReplicas == replicas && cs.Status.UpdatedReadyReplicas == replicas
	})
	w := map[string]string{"kind": "CloneSet", "namespace": ns, "name": "metrics"}
	harness.Eventually(t, 10*time.Second, "gauges report the ready CloneSet", func() (bool, string) {
		f := scrape(t)
		r, u := metricValue(f, "kruise_workload_replicas", w), metricValue(f, "kruise_workload_updated_ready_replicas", w)
		return r == replicas && u == replicas, fmt.Sprintf("replicas %v, updatedReady %v", r, u)
	})
	durationsBefore := max(metricValue(scrape(t), "kruise_workload_rollout_duration_seconds", map[string]string{"kind": "CloneSet"}), 0)

	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	// During the rollout the updated gauge moves through values between 0 and all pods.
	seen := map[float64]bool{}
	rolledOut := harness.RolledOut(replicas)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		seen[metricValue(scrape(t), "kruise_workload_updated_replicas", w)] = true
		cur := &appsv1alpha1.CloneSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(clone), cur); err != nil {
			t.Fatal(err)
		}
		if cur.Status.ObservedGeneration == cur.Generation && rolledOut(cur) {
			break
		}
	}
	partial := 0
	for v := range seen {
		if v > 0 && v < replicas {
			partial++
		}
	}
	if partial == 0 {
		t.Errorf("the updated gauge never showed a partial rollout (values seen: %v)", seen)
	}
	waitCloneSet(t, c, ns, "metrics", "rolled out", harness.RolledOut(replicas))
	harness.Eventually(t, 10*time.Second, "counters and the duration report the rollout", func() (bool, string) {
		f := scrape(t)
		inPlace := metricValue(f, "kruise_workload_pod_updates_total", map[string]string{"namespace": ns, "name": "metrics", "method": "in_place"})
		recreated := metricValue(f, "kruise_workload_pod_updates_total", map[string]string{"namespace": ns, "name": "metrics", "method": "recreate"})
		durations := metricValue(f, "kruise_workload_rollout_duration_seconds", map[string]string{"kind": "CloneSet"})
		unavailable := metricValue(f, "kruise_workload_unavailable_replicas", w)
		// The histogram is per kind: rollouts of other tests' CloneSets may end meanwhile too.
		return inPlace == replicas && recreated <= 0 && durations >= durationsBefore+1 && unavailable == 0,
			fmt.Sprintf("in place %v, recreated %v, rollouts %v (before %v), unavailable %v", inPlace, recreated, durations, durationsBefore, unavailable)
	})
	f := scrape(t)
	if v := metricValue(f, "controller_runtime_webhook_latency_seconds", map[string]string{"webhook": "/validate-apps-kruise-io-v1alpha1-cloneset"}); v <= 0 {
		t.Errorf("no webhook latency samples for the CloneSet validating webhook (%v)", v)
	}
	if _, ok := f["controller_runtime_reconcile_errors_total"]; !ok {
		t.Error("no reconcile error counter")
	}
	// Deleting the CloneSet drops its series.
	if err := c.Delete(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the deleted CloneSet's series are gone", func() (bool, string) {
		v := metricValue(scrape(t), "kruise_workload_replicas", w)
		return v == -1, fmt.Sprintf("replicas gauge %v", v)
	})
}

// An Advanced StatefulSet's rollout moves the same metrics, with kind StatefulSet.
func TestStatefulSetRolloutMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas = 4
	set := newStatefulSet(ns, "metrics", replicas, appsv1.ParallelPodManagement)
	set.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "metrics", "all ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == replicas })
	kind := map[string]string{"kind": "StatefulSet"}
	durationsBefore := max(metricValue(scrape(t), "kruise_workload_rollout_duration_seconds", kind), 0)
	patchStatefulSet(t, c, set, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	waitStatefulSet(t, c, ns, "metrics", "rolled out", harness.StatefulSetRolledOut(replicas))
	w := map[string]string{"kind": "StatefulSet", "namespace": ns, "name": "metrics"}
	harness.Eventually(t, 10*time.Second, "gauges, counters and the duration report the rollout", func() (bool, string) {
		f := scrape(t)
		ready := metricValue(f, "kruise_workload_updated_ready_replicas", w)
		inPlace := metricValue(f, "kruise_workload_pod_updates_total", map[string]string{"kind": "StatefulSet", "namespace": ns, "name": "metrics", "method": "in_place"})
		durations := metricValue(f, "kruise_workload_rollout_duration_seconds", kind)
		return ready == replicas && inPlace == replicas && durations >= durationsBefore+1,
			fmt.Sprintf("updated ready %v, in place %v, rollouts %v (before %v)", ready, inPlace, durations, durationsBefore)
	})
}

// The manager's controllers carry OpenKruise v1.9.0's controller-runtime names, so the controller
// label of controller_runtime_* and workqueue metrics (dashboards, alerts) reads as it did; the
// leader says so in OpenKruise's kruise_manager_is_leader.
func TestControllerNamesAsOpenKruise(t *testing.T) {
	t.Parallel()
	fams := scrape(t)
	if v := metricValue(fams, "kruise_manager_is_leader", nil); v != 1 {
		t.Errorf("kruise_manager_is_leader %v on the leader, want 1", v)
	}
	for _, name := range []string{"cloneset-controller", "statefulset-controller", "daemonset-controller", "sidecarset-controller",
		"broadcastjob-controller", "advancedcronjob-controller", "uniteddeployment-controller", "imagepulljob-controller",
		"imagelistpulljob-controller", "nodeimage-controller", "containerrecreaterequest-controller", "resourcedistribution-controller",
		"workloadspread-controller", "podunavailablebudget-controller", "persistentpodstate-controller", "PodProbeMarker-controller",
		"NodePodProbe-controller", "ephemeraljob-controller", "sidecarterminator-controller", "container-launch-priority-controller",
		"pod-readiness-controller"} {
		if metricValue(fams, "controller_runtime_max_concurrent_reconciles", map[string]string{"controller": name}) < 1 {
			t.Errorf("no controller %q among the manager's controllers", name)
		}
	}
}
