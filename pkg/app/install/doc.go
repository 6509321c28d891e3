// Package install puts Kruise's generated manifests into a cluster: the CRDs, the manager's
// RBAC bound to a given subject, and the webhook configurations pointing at the manager's Service
// (the manager itself then patches their CA bundle, or their URL in URL mode).
package install
