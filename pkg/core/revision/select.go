package revision

import (
	"fmt"
	"math"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Decision says which ControllerRevision records the desired template and what the controller
// must write for it. At most one of Create and Renumber is set; with neither, Update exists as is.
type Decision struct {
	// Update is the update revision: a copy of an existing revision (renumbered when Renumber is
	// set) or, when Create is set, the revision to create.
	Update *appsv1.ControllerRevision
	// Create says Update does not exist yet and must be created.
	Create bool
	// Renumber says Update exists with the desired content but is not the newest: the controller
	// must update its .revision to Update.Revision (the highest existing number plus one).
	Renumber bool
	// CollisionCountBump says the name the desired template hashed to is taken by a revision with
	// other content; Update is named with CollisionCount instead, which the controller must record
	// in the owner's status.collisionCount so the name stays stable.
	CollisionCountBump bool
	// CollisionCount is the collision count Update is named with.
	CollisionCount int32
	// Reason says why, for logs and events.
	Reason string
}

// MaxRevision returns the highest .Revision among revisions, or 0 when there are none.
func MaxRevision(revisions []*appsv1.ControllerRevision) int64 {
	var highest int64
	for _, r := range revisions {
		if r != nil && r.Revision > highest {
			highest = r.Revision
		}
	}
	return highest
}

// Select decides which revision records in for owner, given the owner's existing revisions (those
// it controls) and its status.collisionCount.
//
// Invariants:
//   - A revision whose content is Equal to in is reused, never duplicated; of several, the newest.
//     It is renumbered to the highest number plus one unless it already has the highest number, so
//     the update revision is always the newest.
//   - Otherwise a new revision is created, numbered the highest number plus one.
//   - A new revision never takes the name of an existing one: on a hash collision the collision
//     count is raised until the name is free. (A revision unknown to the caller's cache can still
//     hold the name; on AlreadyExists, compare it with Equal, then reuse it or bump and retry.)
//   - Select modifies none of its inputs; Update shares no memory with them.
func Select(revisions []*appsv1.ControllerRevision, owner metav1.Object, ownerGVK schema.GroupVersionKind,
	in Input, collisionCount *int32) (Decision, error) {
	next := MaxRevision(revisions) + 1
	var count int32
	if collisionCount != nil {
		count = *collisionCount
	}
	want, err := New(owner, ownerGVK, in, next, &count)
	if err != nil {
		return Decision{}, err
	}
	if same := newestEqual(revisions, want); same != nil {
		d := Decision{Update: same.DeepCopy(), CollisionCount: count}
		if same.Revision == next-1 {
			d.Reason = fmt.Sprintf("template matches the newest revision %s (%d)", same.Name, same.Revision)
			return d, nil
		}
		d.Renumber = true
		d.Update.Revision = next
		d.Reason = fmt.Sprintf("template matches older revision %s (%d); renumbered to %d", same.Name,
			same.Revision, next)
		return d, nil
	}
	taken := make(map[string]bool, len(revisions))
	for _, r := range revisions {
		if r != nil {
			taken[r.Name] = true
		}
	}
	d := Decision{Create: true, CollisionCount: count}
	for taken[want.Name] {
		if count == math.MaxInt32 {
			return Decision{}, fmt.Errorf("revision of %s %s/%s: collision count exhausted", ownerGVK.Kind,
				owner.GetNamespace(), owner.GetName())
		}
		d.Reason += fmt.Sprintf("name %s is taken by a revision with other content; ", want.Name)
		count++
		if want, err = New(owner, ownerGVK, in, next, &count); err != nil {
			return Decision{}, err
		}
		d.CollisionCountBump = true
		d.CollisionCount = count
	}
	d.Update = want
	d.Reason += fmt.Sprintf("template matches no revision; create %s (%d)", want.Name, next)
	return d, nil
}

// newestEqual returns the revision with the highest number (then name) among those Equal to want.
func newestEqual(revisions []*appsv1.ControllerRevision, want *appsv1.ControllerRevision) *appsv1.ControllerRevision {
	var best *appsv1.ControllerRevision
	for _, r := range revisions {
		if r == nil || !Equal(r, want) {
			continue
		}
		if best == nil || r.Revision > best.Revision || (r.Revision == best.Revision && r.Name > best.Name) {
			best = r
		}
	}
	return best
}
