// Package revision is the pure revision bookkeeping shared by CloneSet, Advanced StatefulSet and
// Advanced DaemonSet: it builds ControllerRevisions from a pod template, reads them back, decides
// which revision the desired template maps to, and which old revisions to prune. Choose is the one
// reuse/collision/renumber loop of every kind's revisions (Select for pod templates; SidecarSets
// call it with their own data and ReuseNamed). No API calls, no clock, no globals; the controller
// applies the results.
//
// Invariants (OpenKruise v1.9.0 builds its revisions the same way, so either manager names and
// reuses the other's revisions; test/compat checks them against revisions OpenKruise wrote):
//   - A revision's Data is the strategic-merge patch {"spec":{"template":{…,"$patch":"replace"}}}
//     in canonical JSON: keys sorted, no spacing, "creationTimestamp":null in object metadata. The
//     API server re-encodes Data the same way on a metadata patch, so patches (garbage-collector
//     orphaning, kubectl label) never change immutable Data.
//   - A template that is not a pod's (a UnitedDeployment's spec.template, Input.Object) is recorded
//     the same way, every object metadata in it with "creationTimestamp":null; such revisions are
//     labelled with the hash label alone and carry none of the owner's annotations.
//   - Volume claim templates are not in Data; CloneSet records their hash in the annotation
//     ClaimTemplatesHashAnnotation.
//   - The hash is Kubernetes' controller history hash of Data and the collision count (FNV-32,
//     then the count in decimal; nil counts as 0), encoded with rand.SafeEncodeString.
//   - A revision is named <owner>-<hash> (the owner part cut to 223 bytes), labelled with the
//     template's labels plus controller.kubernetes.io/hash=<hash> (controller-revision-hash for
//     Advanced DaemonSets, whose hash is computed the same way: OpenKruise hashes a Go dump of the
//     template, which no other build reproduces, so names differ and Equal matches), annotated with the owner's
//     annotations.
//   - Revisions are matched by content (Equal), never by name: a template equal to an existing
//     revision reuses it, renumbered to the newest when it is not; a different template that
//     hashes to an existing name bumps the collision count instead of overwriting.
//   - Pruning never selects a revision in use, and keeps the newest limit unused revisions.
//   - No function modifies its inputs; returned objects share no memory with them.
package revision
