package podunavailablebudget

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
)

var (
	budgetLabels    = []string{"namespace", "name"}
	allowedGauge    = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kruise_podunavailablebudget_unavailable_allowed", Help: "Pods a PodUnavailableBudget lets become unavailable now (status.unavailableAllowed); 0: every disruption is refused."}, budgetLabels)
	desiredGauge    = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kruise_podunavailablebudget_desired_available", Help: "Pods a PodUnavailableBudget keeps available (status.desiredAvailable)."}, budgetLabels)
	currentGauge    = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kruise_podunavailablebudget_current_available", Help: "Pods a PodUnavailableBudget counts available (status.currentAvailable)."}, budgetLabels)
	budgetGaugeVecs = []*prometheus.GaugeVec{allowedGauge, desiredGauge, currentGauge}
)

func init() {
	metrics.Registry.MustRegister(allowedGauge, desiredGauge, currentGauge)
}

// reportMetrics sets the budget's gauges from its status.
func reportMetrics(pub *policyv1alpha1.PodUnavailableBudget, st *policyv1alpha1.PodUnavailableBudgetStatus) {
	allowedGauge.WithLabelValues(pub.Namespace, pub.Name).Set(float64(st.UnavailableAllowed))
	desiredGauge.WithLabelValues(pub.Namespace, pub.Name).Set(float64(st.DesiredAvailable))
	currentGauge.WithLabelValues(pub.Namespace, pub.Name).Set(float64(st.CurrentAvailable))
}

// forgetMetrics drops the gauges of a budget that is gone.
func forgetMetrics(namespace, name string) {
	for _, g := range budgetGaugeVecs {
		g.DeleteLabelValues(namespace, name)
	}
}
