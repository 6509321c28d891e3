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
//     by priorityStrategy and scatterStrategy (pkg/core/updateorder); partition pods are left; at most
//     maxUnavailable pods whose sidecars are upgraded but not yet ready at a time (a pod not ready
//     anyway costs nothing);
//   - a pod is upgraded in one JSON patch through the in-place engine (the changed images, the hash
//     entry, kruise.io/sidecarset-inplace-update-state), then SidecarSetUpgradable=True.
//
// Hot-upgrade sidecars (upgradeStrategy.upgradeType HotUpgrade) run as two copies, <name>-1 and
// <name>-2, the idle one on hotUpgradeEmptyImage (pkg/core/sidecarrules/hotupgrade_upgrade.go). Their
// new image goes in two in-place patches, as in OpenKruise:
//   - upgrade, in the pod's patch above: the idle copy (or, with neither on the empty image, the
//     one not ready, else the one not working) gets the image and becomes the working copy
//     (kruise.io/sidecarset-working-hotupgrade-container); its version.sidecarset.kruise.io/<copy>
//     annotation becomes the SidecarSet's resourceVersion, its versionalt annotation the other
//     copy's version, the other copy's versionalt annotation the resourceVersion;
//   - flip, once the new copy runs its image and the pod is ready (or every container but the old
//     copy is): the old copy gets the empty image, its version and the working copy's versionalt
//     annotation become "0", the hash entry stays; an event ResetContainerSucceed goes on the pod.
//     Flips come first in each reconcile, whatever updateStrategy says (NotUpdate, paused,
//     partition, selector); a pod also due for an upgrade is upgraded as the flip left it.
//
// A pod counts as ready, and is upgraded at maxUnavailable's cost, only while each idle copy runs
// the empty image: from its upgrade until its old copies run the empty image, it is unavailable.
//
// Left out for now: image pre-download for sidecar upgrades; the in-place upgrade of native-sidecar
// init containers, hot or not (OpenKruise never upgrades them in place either).
package sidecarset
