// Package sidecarinjection is the admission path of SidecarSet injection: Handler injects the
// sidecars of the SidecarSets that select a pod being created (pkg/core/sidecarrules does the work), and
// Registrar keeps the webhook entries that call it in line with the SidecarSets.
//
// Kruise goes beyond OpenKruise here (issue B1): OpenKruise calls its pod webhook for every pod of
// the cluster with failurePolicy Fail, so a manager outage blocks every pod creation, and with
// Ignore a pod silently misses its sidecar. Kruise registers one entry per SidecarSet (Entries),
// whose objectSelector and namespaceSelector are that SidecarSet's own, failing closed:
//   - a pod no SidecarSet selects never calls Kruise: with the manager down it is created as if
//     Kruise were not installed;
//   - a pod some SidecarSet selects is refused while the manager cannot be reached (the API
//     server's message names the entry, <sidecarset>.sidecarset.kruise.io), never created without
//     its sidecar; its workload retries;
//   - every pod whose creation reaches the API server after the create or update of a SidecarSet
//     that selects it returned gets its sidecars: the SidecarSet's admission registers the entry
//     of the spec being stored and answers once the API server calls it (Gate,
//     pkg/webhook/registration), and Handler reads the SidecarSet from the API server when the
//     cache does not know it or knows an older spec that does not select the pod. A pod created
//     while the SidecarSet's create is under way gets its sidecars or not, as if created just
//     after or just before it; the SidecarSet controller then counts it (status.notInjectedPods)
//     with an event on the pod. A SidecarSet whose entry cannot be registered is refused with the
//     reason; one stored around Kruise (by OpenKruise, say) is registered by Registrar, and its
//     InjectionRegistered condition says when.
//
// No annotation of the pod's author is trusted: a pod created with a forged injected-list or hash
// annotation (or containers named as a sidecar) gets every SidecarSet that selects it. Each entry
// that selects a pod calls, and every call injects all the SidecarSets that select it (in name
// order, as OpenKruise), replacing what an earlier call — or the author — put under a sidecar's
// name; injection is idempotent, so a pod selected by K SidecarSets costs K calls and ends as one
// injection would leave it.
package sidecarinjection
