// Package budgetguard is the admission path of PodUnavailableBudget: Handler refuses a pod's
// deletion, eviction, in-place update (spec change) or resize that would take more pods of a
// budget's application out of service than the budget allows, and records the ones it admits in
// the budget's status (podbudget.Admit, under optimistic concurrency); Registrar keeps the webhook
// entries that call it in line with the budgets.
//
// As for SidecarSets (pkg/webhook/sidecarinjection), the API server calls Kruise only for what a
// budget guards, and fails closed there (a guarded pod is not disrupted while Kruise cannot be
// reached; every other pod is deleted, updated and evicted as if Kruise were not installed):
//   - one entry per budget for DELETE and UPDATE of pods and pods/resize, whose objectSelector is
//     the budget's pod selector (spec.selector, or its targetRef workload's selector) and whose
//     namespaceSelector is the budget's namespace;
//   - one entry per namespace that has a budget for evictions (CREATE pods/eviction): the
//     admission object of an eviction is the Eviction, which carries no labels, so these entries
//     can only be scoped by namespace — in a namespace with a budget, every eviction calls Kruise.
//
// A budget's entries are registered by its own admission before it is stored (NewGate,
// pkg/webhook/registration), so that no disruption made after its create returned passes by
// Kruise; a budget whose targetRef workload is not found yet gets a namespace-wide entry that
// fails open until it is (Handler guards only the pods the budget selects), and a budget created
// moments ago refuses the disruptions of its pods until its controller has counted them (for a
// minute at most).
//
// Handler decides from the live pod the request names (by UID, from the cache or the API
// server; pkg/webhook/livepod), never from the request's oldObject: a request about a pod that
// does not exist or has another UID changes no budget. A budget the cache does not hold yet is
// read from the API server: the one a budget's entry names, and those of the namespace when an
// eviction's pod is among none the cache holds. Who may call it at all is
// pkg/webhook/callers' concern.
//
// A refused eviction answers 429 with a retry hint, as Kubernetes' PodDisruptionBudget does, so
// `kubectl drain` waits and retries; a refused deletion or update answers 403, as OpenKruise does.
package budgetguard
