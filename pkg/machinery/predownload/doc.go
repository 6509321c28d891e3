// Package predownload pulls the images of a workload's in-place update onto the nodes of its pods
// before the pods are updated (feature gate PreDownloadImageForInPlaceUpdate), as OpenKruise does
// it for CloneSet and Advanced StatefulSet, so that either manager continues what the other
// started. Decide is pure; Sync is the only writer.
//
// Guarantees:
//   - An update revision is decided once, while it differs from the current revision and as many
//     updated pods are ready as apps.kruise.io/image-predownload-min-updated-ready-pods asks; the
//     revision is then labelled CreatedLabel (or IgnoredLabel when skipped) and never considered
//     again.
//   - Skipped when the update strategy never updates in place (the workload says why), for
//     MinReplicas pods or fewer, when every pod updates in one batch (partition 0 and
//     maxUnavailable at least replicas), and when the update cannot be in place.
//   - One ImagePullJob per container whose image the update changes, named
//     <update revision>-<container>, selecting the workload's pods not at the update revision (the
//     ImagePullJob controller pulls onto their nodes), controlled by the workload.
//   - Every job the workload controls is deleted once the current revision is the update revision.
package predownload
