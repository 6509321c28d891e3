// Package podunavailablebudget runs PodUnavailableBudgets: it finds the pods a budget guards
// (spec.selector, or its targetRef workload's pods through pkg/machinery/workloadfinder), marks them with the
// kruise.io/related-pub annotation, and writes the status OpenKruise v1.9.0 writes
// (podbudget.Status): the pods the budget counts on, how many are and must stay available, how
// many more may become unavailable, and the disruptions the pod webhook (pkg/webhook/budgetguard)
// recorded that the pods do not show yet, until their timeout.
//
// The status has two writers, as in OpenKruise (and as a PodDisruptionBudget's has, with the
// eviction API): this controller and the webhook, which records each disruption it admits. Both
// write with the object's resourceVersion, so neither overwrites what the other wrote.
package podunavailablebudget
