package callers

import "github.com/prometheus/client_golang/prometheus"

// Refused is the counter of the calls refused at path.
func Refused(path string) prometheus.Counter { return refusedCalls.WithLabelValues(path) }
