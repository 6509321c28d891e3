// Package manager assembles kruise-manager: the admission webhook server with its self-managed
// certificates, then (once the webhook server serves) the controllers, under leader election.
package manager
