// Package rolloutmetrics is the Prometheus view of workload rollouts, shared by the workload
// controllers and served on kruise-manager's metrics endpoint (controller-runtime's registry):
//
//	kruise_workload_replicas, kruise_workload_ready_replicas, kruise_workload_updated_replicas,
//	kruise_workload_updated_ready_replicas, kruise_workload_unavailable_replicas
//	    gauges per workload {kind, namespace, name}, from the status the controller computes
//	kruise_workload_pod_updates_total{kind, namespace, name, method="in_place"|"recreate"}
//	    pods moved to a new revision, by how
//	kruise_workload_inplace_update_failures_total{kind, namespace, name}
//	    in-place updates the API refused (the pod is retried)
//	kruise_workload_rollout_duration_seconds{kind}
//	    from the update revision's creation to the rollout's end (every pod updated and ready)
//
// controller-runtime's own metrics cover the rest: controller_runtime_reconcile_errors_total,
// controller_runtime_reconcile_time_seconds, controller_runtime_webhook_latency_seconds.
package rolloutmetrics
