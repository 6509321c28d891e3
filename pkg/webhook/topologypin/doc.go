// Package topologypin is the admission path of PersistentPodState: Handler brings a pod
// created under the name of a pod whose state was recorded back to the recorded topology
// (Topology, as OpenKruise v1.9.0 does: the required topology as a nodeSelector, each preferred
// topology as a preferred node affinity term of its weight), and Registrar keeps the webhook
// entries that call it in line with the PersistentPodStates.
//
// As for SidecarSets (pkg/webhook/sidecarinjection) and PodUnavailableBudgets
// (pkg/webhook/budgetguard), the API server calls Kruise only for the pods a PersistentPodState
// selects, and fails closed there: one entry per PersistentPodState, scoped to its namespace, whose
// matchConditions select the pods controlled by its targetRef workload that carry no injection
// yet (a StatefulSet, or a kind of the custom workload whitelist, read on each registrar pass). A pod no PersistentPodState selects never calls Kruise, so a manager outage never blocks it;
// a pod of a targeted workload is refused while the manager cannot be reached (its workload
// retries), never created away from its recorded topology. Its entry is registered by its own
// admission before it is stored (NewGate, pkg/webhook/registration), so it is in place before
// any state is recorded.
package topologypin
