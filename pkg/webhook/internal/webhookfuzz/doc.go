// Package webhookfuzz is the fuzzing harness of the admission webhooks, for their packages' tests:
// it collects the webhooks a package's Register serves (so that a new kind is fuzzed without a
// change here), seeds a corpus with real and hand-written objects of their kinds, and checks that
// each answer to arbitrary bytes is well formed.
package webhookfuzz
