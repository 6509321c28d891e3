// Package demo is `make demo`: a sandbox with Kruise, a CloneSet of 50 pods behind a Service, and
// an in-place rollout from v1 to v2 — a canary batch held by the partition, then the rest — shown
// live and summed up. The cluster stays up for the user to explore.
package demo
