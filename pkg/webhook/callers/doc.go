// Package callers decides who may call kruise-manager's webhook server and what each caller is
// trusted with. A caller is known by the client certificate it presents in the TLS handshake:
//   - Replica: a certificate verified against the webhook CA the manager keeps itself
//     (pkg/webhook/certs; only the manager can read its key). Replicas present their serving
//     certificate, which is issued for client auth too, when one passes a call on to another
//     (pkg/webhook/decider); only such a call is taken as passed on (mount.Forwarded).
//   - APIServer: a certificate verified against the CA bundle of --webhook-client-ca-file (the
//     one the API server presents to webhooks when its admission configuration names a kubeconfig
//     with a client certificate), with a common name among --webhook-client-allowed-names when
//     those are set.
//   - Anonymous: no certificate. When --webhook-client-ca-file is set, anonymous calls are refused
//     with 403 on every path but the CRD conversion webhook's (the API server calls conversion
//     webhooks without a client certificate); otherwise they are served, as OpenKruise serves
//     every caller.
//
// A certificate that is presented but verifies against neither CA counts as none: the handshake
// never fails for it, so an API server that presents one to every webhook still reaches a manager
// that was not told its CA.
package callers
