// Package sidecarrules is the pure core of SidecarSet injection at pod creation, wire-compatible
// with OpenKruise v1.9.0: Inject turns a new pod and the SidecarSets into the pod to admit, and
// Hash, HashWithoutImage, RevisionData and RevisionName compute what OpenKruise stores on
// SidecarSets, their ControllerRevisions and their pods. No API calls, no clock, no globals: the
// caller passes the namespace's labels, the time, the SidecarSets' revisions and any randomness.
//
// Guarantees:
//   - Hash, HashWithoutImage and RevisionName give OpenKruise's values for the same stored spec
//     (golden-tested on SidecarSet sc-log and its pods of the takeover fixture), so a takeover
//     re-upgrades no sidecar and renames no revision.
//   - The pod annotations kruise.io/sidecarset-hash, -hash-without-image and -injected-list are
//     written byte for byte as OpenKruise writes them; entries of other SidecarSets already on the
//     pod are kept (the older name→hash format is read too).
//   - A SidecarSet is injected only when it is not paused (injectionStrategy.paused) and selects
//     the pod (Matches: selector, v1alpha1 namespace, namespaceSelector); SidecarSets are applied
//     in name order, so the result does not depend on the order of the input.
//   - Two SidecarSets (or one twice) that would inject containers of the same name make Inject
//     fail with an error naming both; a sidecar named like one of the pod's own containers
//     replaces it in place, as in OpenKruise.
//   - Every injected container carries IS_INJECTED=true. The pod's own volumes and image pull
//     secrets win over the SidecarSets' (by name); a sidecar's own env vars (by name) and mounts
//     (by path) win over those it copies from the app containers. Containers go before or after
//     the pod's own by podInjectPolicy; init containers, sorted by name, likewise.
//   - patchPodMetadata applies in SidecarSet order; MergePatchJson values are encoded exactly as
//     OpenKruise's merge-patch library encodes them.
//   - A sidecar (or native sidecar) with a resourcesPolicy gets the resources OpenKruise computes
//     from the pod's containers and native sidecars named by its regular expression (those of the
//     injected SidecarSets excepted), combined by sum or max, through its expressions
//     (resources.go, resources_expr.go); a policy that fails refuses the pod with an error naming
//     the SidecarSet and the field. ParseResourceExpr and ValidateResourceExpr serve the
//     SidecarSet webhook.
//   - Inject never modifies its inputs, its result shares no memory with them, and it never
//     panics, whatever the input (fuzzed by FuzzInjectNeverPanics, FuzzInjectResourcesPolicy and,
//     for the expressions, FuzzResourceExpr).
//
// The in-place upgrade of injected sidecars is planned here too, for pkg/controller/sidecarset:
// PlanUpgrade and PlanFullUpgrade (cold and hot sidecars), PlanFlip (the end of a hot upgrade),
// and the checks Updated, Consistent, Ready, Running, ImagesOnly, InFlight (upgrade.go,
// hotupgrade_upgrade.go), with the annotations and the SidecarSetUpgradable condition written as
// OpenKruise writes them.
//
// Left out for now: the pod-update path (re-injection on pod update, OpenKruise's
// NeedToInjectInUpdatedPod). Where OpenKruise's resourcesPolicy arithmetic converts a float64 that
// no int64 holds (its result then depends on the CPU), the pod is refused instead.
package sidecarrules
