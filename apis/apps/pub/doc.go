// Package pub holds the types and constants that several apps.kruise.io kinds share and that other
// components (webhooks, the daemon, user tooling) read from pods: lifecycle states and hooks, the
// in-place update state, update priority and scatter strategies, readiness-gate condition types,
// and the label and annotation keys of the Kruise protocol.
// +kubebuilder:object:generate=true
package pub
