package openkruisemetrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	isLeader = prometheus.NewGauge(prometheus.GaugeOpts{Name: "kruise_manager_is_leader",
		Help: "1 while this kruise-manager replica is the leader (runs the controllers), 0 otherwise."})
	podUnavailableBudget = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pod_unavailable_budget",
		Help: "Pod disruptions (deletions, evictions, in-place updates) a PodUnavailableBudget refused, by the pod's workload (Kind_namespace_name) and the requesting user."},
		[]string{"kind_namespace_name", "username"})
	namespaceDeletionProtection = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "namespace_deletion_protection",
		Help: "Namespace deletions refused by deletion protection, by namespace and requesting user."}, []string{"name", "username"})
	crdDeletionProtection = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "crd_deletion_protection",
		Help: "CustomResourceDefinition deletions refused by deletion protection, by CRD and requesting user."}, []string{"name", "username"})
	workloadDeletionProtection = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workload_deletion_protection",
		Help: "Workload (and Service, Ingress) deletions refused by deletion protection, by Kind_namespace_name and requesting user."},
		[]string{"kind_namespace_name", "username"})
	cloneSetScaleExpectationLeakage = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cloneset_scale_expectation_leakage",
		Help: "CloneSet reconciles whose own pod writes the cache had not shown within the expectation timeout."}, []string{"namespace", "name"})
)

func init() {
	metrics.Registry.MustRegister(isLeader, podUnavailableBudget, namespaceDeletionProtection, crdDeletionProtection,
		workloadDeletionProtection, cloneSetScaleExpectationLeakage)
}

// SetLeader records whether this replica leads.
func SetLeader(leader bool) {
	if leader {
		isLeader.Set(1)
	} else {
		isLeader.Set(0)
	}
}

// KindNamespaceName is OpenKruise's label value for an object: Kind_namespace_name.
func KindNamespaceName(kind, namespace, name string) string {
	return fmt.Sprintf("%s_%s_%s", kind, namespace, name)
}

// BudgetRefused counts a disruption a PodUnavailableBudget refused to user, of a pod of the
// workload kind/name in namespace (kind "unknown" and the pod's name for a pod no controller owns).
func BudgetRefused(kind, namespace, name, user string) {
	podUnavailableBudget.WithLabelValues(KindNamespaceName(kind, namespace, name), user).Inc()
}

// NamespaceDeletionRefused counts a refused deletion of namespace name by user.
func NamespaceDeletionRefused(name, user string) {
	namespaceDeletionProtection.WithLabelValues(name, user).Inc()
}

// CRDDeletionRefused counts a refused deletion of CustomResourceDefinition name by user.
func CRDDeletionRefused(name, user string) { crdDeletionProtection.WithLabelValues(name, user).Inc() }

// WorkloadDeletionRefused counts a refused deletion of the kind object namespace/name by user.
func WorkloadDeletionRefused(kind, namespace, name, user string) {
	workloadDeletionProtection.WithLabelValues(KindNamespaceName(kind, namespace, name), user).Inc()
}

// CloneSetExpectationLeaked counts a CloneSet reconcile that found its own writes missing from
// the cache after the expectation timeout.
func CloneSetExpectationLeaked(namespace, name string) {
	cloneSetScaleExpectationLeakage.WithLabelValues(namespace, name).Inc()
}
