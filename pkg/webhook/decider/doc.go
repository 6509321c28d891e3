// Package decider makes one kruise-manager replica — the leader — the one that answers the
// admissions whose answer depends on what the replicas decided before (a WorkloadSpread's subset
// quota), so that it can answer them from memory and write the status behind instead of making
// every pod creation wait for a status write.
//
// Every replica serves the webhooks (the API server calls any of them). The leader publishes the
// address of its webhook server in a Lease and decides; the other replicas pass the calls on to
// that address, over mutual TLS: the decider's certificate is checked against the webhooks' own CA
// bundle, and the follower presents its serving certificate (issued by that CA for client auth
// too), without which the decider does not take the call as passed on (pkg/webhook/callers). The
// calls are marked so that they are never passed on twice. A replica that finds no leader to ask answers the call itself, the slow
// and safe way (the status written before the answer).
package decider
