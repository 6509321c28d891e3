// Package sidecarset runs SidecarSets after injection (pkg/webhook/sidecarinjection injects at
// pod creation): it records their revisions, reports their status and upgrades the injected
// sidecars in place, as OpenKruise v1.9.0 does, so that either manager can take over from the
// other with no pod touched.
//
// Each reconcile observes the pods that carry the SidecarSet's sidecars (injected, selected, alive),
// registers the latest ControllerRevision (in the manager's namespace, named and numbered as
// OpenKruise names them; older ones pruned beyond revisionHistoryLimit unless a pod or
// injectionStrategy.revision uses them), writes the status, and — unless updateStrategy.type is
// NotUpdate or updateStrategy.paused — plans the next pods to upgrade (Compute, pure):
//   - only pods whose sidecars differ from the SidecarSet in images alone (the pod's
//     kruise.io/sidecarset-hash-without-image entry equals the SidecarSet's) are upgraded; the
//     others get the pod condition SidecarSetUpgradable=False (UpdateImmutableField) and an event;
//   - candidates are those updateStrategy.selector selects, in Kubernetes' ActivePods order, then
//     by priorityStrategy and scatterStrategy (pkg/updateorder); partition pods are left; at most
//     maxUnavailable pods whose sidecars are upgraded but not yet ready at a time (a pod not ready
//     anyway costs nothing);
//   - a pod is upgraded in one JSON patch through the in-place engine (the changed images, the hash
//     entry, kruise.io/sidecarset-inplace-update-state), then SidecarSetUpgradable=True.
//
// Left out for now: hot-upgrade sidecars are injected but not upgraded (nor flipped); image
// pre-download for sidecar upgrades.
package sidecarset
