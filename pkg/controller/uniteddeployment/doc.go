// Package uniteddeployment runs UnitedDeployments: one workload per subset, its replicas given by
// the pure allocator below, its template patched for the subset.
//
// Allocation invariants (those of OpenKruise v1.9.0):
//   - Fixed, no minReplicas/maxReplicas: subsets with `replicas` (an integer, or a percentage of
//     spec.replicas rounded half up) get exactly that; the rest is shared evenly by the other
//     subsets, the remainder going one each to those with the most current replicas (ties: the
//     greater name). Fixed values summing above spec.replicas, or all subsets fixed and summing
//     below it, are errors; an unparsable `replicas` counts as unset.
//   - Elastic (some minReplicas/maxReplicas): minimums are filled first in subset order, then
//     subsets are filled up to their maximum in subset order. minReplicas > maxReplicas is an
//     error.
//   - Adaptive: as elastic, but an unschedulable subset keeps at most its ready pods (and at least
//     its minimum), and a schedulable subset never drops below its ready pods (within its
//     maximum), so stuck replicas move to later subsets and healthy pods are never deleted.
//   - Adaptive with reserveUnschedulablePods: pods that cannot schedule are kept in their subset
//     and not counted, so as many temporary replicas are given to later subsets.
//   - The result has one entry per subset of the spec.
//
// Subset workloads are created with generateName "<ud>-<subset>-" (or "<ud>-" when that is not a
// valid name prefix), the label apps.kruise.io/subset-name added to their labels, selector and
// pod template, and the annotation apps.kruise.io/subset-patch holding the subset's patch.
package uniteddeployment
