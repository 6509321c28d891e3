// Package persistentpodstate runs PersistentPodStates (apps.kruise.io/v1alpha1), as OpenKruise
// v1.9.0 does, for workloads that are StatefulSets (apps/v1), Advanced StatefulSets
// (apps.kruise.io) or custom workloads of the PPS_Watch_Custom_Workload_WhiteList whitelist
// (read through their scale subresource; a pod's ordinal is the number ending its name):
//   - Reconciler records, in status.podStates[pod], the node of every ready pod of the targeted
//     workload, that node's labels named by the required and preferred topology keys, and the pod's
//     annotations named by spec.persistentPodAnnotations (PlanStates). The pod webhook
//     (pkg/webhook/topologypin) brings a pod recreated under the same name back to that
//     topology.
//   - Generator keeps, for a StatefulSet annotated kruise.io/auto-generate-persistent-pod-state:
//     "true", a PersistentPodState of the same name that it controls, built from the annotations
//     kruise.io/required-persistent-topology, kruise.io/preferred-persistent-topology (weight 100)
//     and kruise.io/persistent-pod-annotations (PlanGenerated).
//
// Invariants:
//   - a state is recorded only for a pod that is Ready and bound to a node, and is rewritten only
//     when the pod moved to another node or the recorded keys are not the wanted ones;
//   - with retention WhenScaled (the default), the state of a pod whose ordinal is no longer a
//     replica (ordinals.start and reserveOrdinals counted; 0 to replicas-1 for a custom workload)
//     is dropped once that pod is gone; with WhenDeleted, states survive scale-in; both drop every
//     state when the workload is deleted (for a custom workload, once it is gone);
//   - memory follows the objects, not the numbers in them: a target's replicas are intervals
//     (pkg/core/ordinal), so a replicas of 2^31-1 or 30 million reserved ordinals -- which the Advanced
//     StatefulSet webhook refuses, but a scale subresource or a disabled webhook lets through --
//     is tracked as any other, with no condition needed;
//   - the Generator never creates, updates or deletes a PersistentPodState its workload does not
//     control (OpenKruise would overwrite or delete a user's object of the same name).
package persistentpodstate
