// Package subset is the one notion of a topology "subset" shared by UnitedDeployment and
// WorkloadSpread: a group of nodes described by node terms, tolerations and a patch. It is pure:
// objects and times in, new objects and verdicts out; no API calls, and inputs are never modified.
//
// Invariants (those of OpenKruise v1.9.0):
//   - UnitedDeployment: the subset's nodeSelectorTerm.matchExpressions are ANDed into every
//     required node selector term of the pod template (one term is created when there is none);
//     its matchFields are ignored. Tolerations are appended. The patch is then applied as a
//     strategic merge patch of the whole pod template, so it wins over the other fields.
//   - WorkloadSpread: preferred terms and tolerations are appended; requiredNodeSelectorTerm is
//     ANDed (expressions and fields) into every required term, or becomes the only term. The patch
//     is a strategic merge patch of the whole pod; if it changes priorityClassName, spec.priority
//     is cleared so the API server's priority admission sets it again.
//   - A pod is stuck when it is Pending, unbound, not deleting, carries PodScheduled=False with
//     reason Unschedulable, and was created more than rescheduleCriticalSeconds ago. A subset
//     with a stuck pod is unschedulable; once marked, it stays so until the mark is
//     unschedulableDuration old (WorkloadSpread: a fixed 5 minutes).
//   - Node matching is Kubernetes' own (k8s.io/component-helpers), never re-implemented.
package subset
