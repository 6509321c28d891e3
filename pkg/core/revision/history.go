package revision

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
)

// ToDelete returns the revisions to prune so that at most limit revisions not in use remain,
// oldest first (lowest .Revision, then creation time, then name). inUse holds the names of
// revisions that live pods carry or that are the owner's current or update revision; they are
// never returned and do not count against limit. A negative limit counts as 0.
func ToDelete(revisions []*appsv1.ControllerRevision, inUse map[string]bool, limit int32) []*appsv1.ControllerRevision {
	var unused []*appsv1.ControllerRevision
	for _, r := range revisions {
		if r != nil && !inUse[r.Name] {
			unused = append(unused, r)
		}
	}
	excess := len(unused) - max(int(limit), 0)
	if excess <= 0 {
		return nil
	}
	sort.SliceStable(unused, func(i, j int) bool {
		a, b := unused[i], unused[j]
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	return unused[:excess]
}
