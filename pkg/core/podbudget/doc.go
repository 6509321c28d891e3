// Package podbudget is the pure core of PodUnavailableBudget, wire-compatible with OpenKruise
// v1.9.0: when a pod counts as available, how many must stay available, what the controller
// writes in the status, and whether one more pod may be disrupted (Admit), which the pod webhook
// asks before a deletion, an eviction, an in-place update or a resize goes through.
//
// No API calls, no clock: callers pass the time, the pods and the budget, and write the results.
package podbudget
