// Package openkruisemetrics exports, on kruise-manager's metrics endpoint, the metrics OpenKruise
// v1.9.0's manager exports, with its names, types, labels and meaning, so that dashboards and
// alerts written for OpenKruise keep working beside Kruise's own kruise_* metrics.
package openkruisemetrics
