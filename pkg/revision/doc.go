// Package revision is the pure revision bookkeeping shared by CloneSet, Advanced StatefulSet and
// Advanced DaemonSet: it builds ControllerRevisions from a pod template, reads them back, decides
// which revision the desired template maps to, and which old revisions to prune. No API calls, no
// clock, no globals; the controller applies the results.
//
// Invariants:
//   - A revision's Data is the strategic-merge patch {"spec":{"template":{…,"$patch":"replace"}}}
//     (plus "volumeClaimTemplates" when given), the shape OpenKruise writes, so revisions made by
//     either implementation are read and compared alike.
//   - The hash is a function of Data and the collision count only: FNV-32a over the JSON encoding
//     of Data, salted with the collision count, encoded with rand.SafeEncodeString. The encoding
//     sorts map keys, so the hash is the same in every process; a nil collision count hashes as 0.
//   - A revision is named <owner>-<hash> (the owner part shortened to keep the name a valid
//     object name) and labelled controller-revision-hash=<hash>.
//   - Revisions are matched by content (Equal), never by name: a template equal to an existing
//     revision reuses it, renumbered to the newest when it is not; a different template that
//     hashes to an existing name bumps the collision count instead of overwriting.
//   - Pruning never selects a revision in use, and keeps the newest limit unused revisions.
//   - No function modifies its inputs; returned objects share no memory with them.
package revision
