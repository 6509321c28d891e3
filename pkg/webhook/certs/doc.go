// Package certs gives kruise-manager's webhook server its TLS material without any outside help:
// a CA and a serving certificate kept in a Secret (shared by every replica), written to the folder
// the webhook server watches (so a renewal is picked up without a restart), and the CA bundle
// patched into the webhook configurations and the CRDs' conversion webhooks.
//
// Invariants:
//   - the serving certificate is renewed RenewBefore its expiry, with the same CA while the CA itself
//     has more than RenewBefore left;
//   - when the CA is renewed, the previous CA stays in the CA bundle until it expires, so API servers
//     holding either bundle keep trusting the server during the switch;
//   - replicas that race to renew converge on one Secret (optimistic concurrency on its
//     resourceVersion); the losers adopt the winner's certificates;
//   - a damaged Secret heals within seconds (the Rotator watches it): a key that does not match its
//     certificate, a CA key that does not match the CA, an expired pair, a deleted Secret;
//   - a CA replaced before its time (damage, deletion) leaves the bundle only once every replica
//     reports serving the new one (ServedByAnnotation); the bundle is patched before a replica
//     serves a certificate of a new CA.
package certs
