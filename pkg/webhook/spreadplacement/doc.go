// Package spreadplacement is the admission path of WorkloadSpread: Handler places each pod a
// WorkloadSpread spreads into a subset at its creation (the first subset with room, injected with
// pkg/core/subset's ApplyToPod and named by the apps.kruise.io/matched-workloadspread annotation) and
// records the creation, and each deletion or eviction of such a pod, in the spread's status under
// optimistic concurrency; Registrar keeps the webhook entries that call it in line with the spreads.
//
// As for SidecarSets and PodUnavailableBudgets, the API server calls Kruise only for the pods a
// spread selects (OpenKruise calls its pod webhook for every pod of the cluster):
//   - one entry per spread for pod CREATE, whose objectSelector is the spread's targetRef
//     workload's selector ANDed with spec.targetFilter.selector and whose namespaceSelector is the
//     spread's namespace; it fails closed, so a pod the spread selects is never created outside
//     its subset while Kruise cannot be reached (its workload retries), and every other pod is
//     created as if Kruise were not installed;
//   - one entry per spread for pod DELETE and one per namespace with a spread for evictions
//     (CREATE pods/eviction, which carries no labels): these only keep books the controller
//     recounts from the pods anyway, so they fail open and a deletion never waits for Kruise.
//
// A spread's entries are registered by its own admission before it is stored (NewGate,
// pkg/webhook/registration), so that no pod created after its create returned is created
// unplaced; while its targetRef workload is not found (a spread applied before its workload),
// its entries cover every pod of its namespace and fail open, and Handler places only the
// workload's pods.
//
// A pod already carrying the matched-workloadspread annotation skips the creation entries (their
// matchConditions), so when two spreads select one pod the first called places it, as OpenKruise
// places a pod in the first spread it lists. Dry-run requests are answered without a status write.
//
// A deletion or eviction is released for the live pod it names only (by UID; pkg/webhook/livepod),
// never from the request's oldObject. A creation cannot be checked so (the pod does not exist
// yet): that a recorded creation is the API server's rests on pkg/webhook/callers (the API
// server's client certificate) and the chart's NetworkPolicy; an unmatched creation expires from
// creatingPods (workloadspread.CreateTimeout).
package spreadplacement
