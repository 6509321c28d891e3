// Package sidecarinjection is the admission path of SidecarSet injection: Handler injects the
// sidecars of the SidecarSets that select a pod being created (pkg/sidecarset does the work), and
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
//   - once a SidecarSet carries RegisteredAnnotation equal to its generation, every pod created
//     that this generation selects gets its sidecars (the entry names it, and Handler reads it
//     from the API server when the cache lags).
//
// When several SidecarSets select a pod, the first entry called injects them all (in name order,
// as OpenKruise); the others are skipped by the API server (the entries' matchConditions read the
// pod's injected-list annotation), so a pod costs one call whatever the number of SidecarSets.
package sidecarinjection
