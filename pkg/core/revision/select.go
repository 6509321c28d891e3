package revision

import (
	"errors"
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

// Reuse says which existing revision with the wanted content Choose reuses.
type Reuse int

const (
	// ReuseNewestEqual reuses the newest revision Equal to the wanted one, whatever its name
	// (Kubernetes' controller history rule; OpenKruise's workloads).
	ReuseNewestEqual Reuse = iota
	// ReuseNamed reuses only the revision that holds the wanted name, the collision count raised
	// past names held by other content (the SidecarSet controller's rule): an equal revision under
	// another name is not reused, and a new one is created.
	ReuseNamed
)

// Wanted describes the revision a controller wants to record, apart from its number.
type Wanted struct {
	// Build returns the revision to create when named with collisionCount; its .Revision is
	// ignored. Each call returns a new object.
	Build func(collisionCount int32) (*appsv1.ControllerRevision, error)
	// Equal says whether existing records the content want records.
	Equal func(existing, want *appsv1.ControllerRevision) bool
	// Reuse says which equal revision is reused.
	Reuse Reuse
	// Subject names what a revision records ("template", "spec"), for Decision.Reason.
	Subject string
}

// errCollisionCountExhausted says no collision count up to math.MaxInt32 names a free revision.
var errCollisionCountExhausted = errors.New("collision count exhausted")

// Choose decides which revision records w, given the existing revisions and the collision count
// recorded in the owner's status. It is the one selection loop of every kind's revisions.
//
// Invariants:
//   - A revision equal to w (which one: w.Reuse) is reused, renumbered to the highest number
//     plus one unless it already has the highest number, so the update revision is the newest.
//   - Otherwise a new revision is created, numbered the highest number plus one.
//   - A new revision never takes the name of an existing one: on a name taken by other content
//     the collision count is raised until the name is free (or, with ReuseNamed, held by equal
//     content, which is then reused).
//   - Choose modifies none of its inputs; Update shares no memory with them.
//
// It fails with Build's error, or when the collision count would pass math.MaxInt32.
func Choose(revisions []*appsv1.ControllerRevision, collisionCount int32, w Wanted) (Decision, error) {
	next := MaxRevision(revisions) + 1
	count := collisionCount
	want, err := w.Build(count)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{CollisionCount: count}
	if w.Reuse == ReuseNewestEqual {
		if same := newestEqual(revisions, want, w.Equal); same != nil {
			return reuse(d, same, next, w.Subject), nil
		}
	}
	byName := make(map[string]*appsv1.ControllerRevision, len(revisions))
	for _, r := range revisions {
		if r != nil {
			byName[r.Name] = r
		}
	}
	for {
		holder, taken := byName[want.Name]
		if !taken {
			break
		}
		if w.Reuse == ReuseNamed && w.Equal(holder, want) {
			return reuse(d, holder, next, w.Subject), nil
		}
		if count == math.MaxInt32 {
			return Decision{}, errCollisionCountExhausted
		}
		d.Reason += fmt.Sprintf("name %s is taken by a revision with other content; ", want.Name)
		count++
		if want, err = w.Build(count); err != nil {
			return Decision{}, err
		}
		d.CollisionCountBump = true
		d.CollisionCount = count
	}
	want.Revision = next
	d.Create = true
	d.Update = want
	d.Reason += fmt.Sprintf("%s matches no revision; create %s (%d)", w.Subject, want.Name, next)
	return d, nil
}

// reuse completes d with a copy of same as the update revision, renumbered to next unless it is
// the newest (numbered next-1).
func reuse(d Decision, same *appsv1.ControllerRevision, next int64, subject string) Decision {
	d.Update = same.DeepCopy()
	if same.Revision == next-1 {
		d.Reason += fmt.Sprintf("%s matches the newest revision %s (%d)", subject, same.Name, same.Revision)
		return d
	}
	d.Renumber = true
	d.Update.Revision = next
	d.Reason += fmt.Sprintf("%s matches older revision %s (%d); renumbered to %d", subject, same.Name,
		same.Revision, next)
	return d
}

// Select decides which revision records in for owner, given the owner's existing revisions (those
// it controls) and its status.collisionCount: Choose with New's revision of in, Equal and
// ReuseNewestEqual.
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
	var count int32
	if collisionCount != nil {
		count = *collisionCount
	}
	d, err := Choose(revisions, count, Wanted{
		Build: func(c int32) (*appsv1.ControllerRevision, error) {
			return New(owner, ownerGVK, in, 0, &c)
		},
		Equal:   Equal,
		Reuse:   ReuseNewestEqual,
		Subject: "template",
	})
	if errors.Is(err, errCollisionCountExhausted) {
		return Decision{}, fmt.Errorf("revision of %s %s/%s: %w", ownerGVK.Kind, owner.GetNamespace(),
			owner.GetName(), err)
	}
	return d, err
}

// newestEqual returns the revision with the highest number (then name) among those equal to want.
func newestEqual(revisions []*appsv1.ControllerRevision, want *appsv1.ControllerRevision,
	equal func(existing, want *appsv1.ControllerRevision) bool) *appsv1.ControllerRevision {
	var best *appsv1.ControllerRevision
	for _, r := range revisions {
		if r == nil || !equal(r, want) {
			continue
		}
		if best == nil || r.Revision > best.Revision || (r.Revision == best.Revision && r.Name > best.Name) {
			best = r
		}
	}
	return best
}
