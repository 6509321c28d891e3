// Package metricsauth guards the /metrics endpoints of kruise-manager and kruise-daemon. A scrape
// is answered only over TLS, and only to a caller whose bearer token the API server authenticates
// (TokenReview) and who may `get` the non-resource URL it asked for (SubjectAccessReview): the
// ClusterRole kruise-metrics-reader (install.MetricsReaderClusterRole) grants exactly that. Without
// a valid token the answer is 401, without the right 403. The component itself needs `create` on
// tokenreviews and subjectaccessreviews (markers in pkg/app/manager and pkg/app/daemon).
package metricsauth
