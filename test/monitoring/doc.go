// Package monitoring checks the chart's monitoring assets (charts/kruise/files: the PrometheusRule's
// rules and the Grafana dashboard): every expression parses as PromQL, and the metrics they name are
// the list in names.txt, which e2e TestMonitoringNamesServedMetrics checks against a live
// kruise-manager. It is its own Go module, so Prometheus' parser stays out of the manager's.
package monitoring
