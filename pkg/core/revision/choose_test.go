package revision

import (
	"bytes"
	"math"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
)

// Choose directly, with a wanted revision of raw data named "s-<HashData(data, count)>", under
// both reuse rules.

const wantedData = `{"spec":{"image":"v2"}}`

// wantedName is the name Choose's wanted revision takes under collisionCount.
func wantedName(collisionCount int32) string {
	return Name("s", HashData([]byte(wantedData), &collisionCount))
}

func wanted(reuse Reuse) Wanted {
	return Wanted{
		Build: func(c int32) (*appsv1.ControllerRevision, error) {
			return rawRevision(wantedName(c), 0, wantedData), nil
		},
		Equal: func(existing, want *appsv1.ControllerRevision) bool {
			return bytes.Equal(existing.Data.Raw, want.Data.Raw)
		},
		Reuse:   reuse,
		Subject: "spec",
	}
}

func TestChoose(t *testing.T) {
	other := `{"spec":{"image":"v1"}}`
	type want = outcome
	tests := []struct {
		name      string
		existing  []*appsv1.ControllerRevision
		collision int32
		reuse     Reuse
		want      want
	}{
		{name: "no history: create revision 1", reuse: ReuseNamed,
			want: want{create: true, name: wantedName(0), number: 1}},
		{name: "named revision is the newest: reuse as is", reuse: ReuseNamed,
			existing: []*appsv1.ControllerRevision{rawRevision("s-a", 1, other), rawRevision(wantedName(0), 2, wantedData)},
			want:     want{name: wantedName(0), number: 2}},
		{name: "named revision is older: renumber to max+1", reuse: ReuseNamed,
			existing: []*appsv1.ControllerRevision{rawRevision(wantedName(0), 3, wantedData), rawRevision("s-a", 7, other)},
			want:     want{renumber: true, name: wantedName(0), number: 8}},
		{name: "name taken by other data: bump and create", reuse: ReuseNamed,
			existing: []*appsv1.ControllerRevision{rawRevision(wantedName(0), 1, other)},
			want:     want{create: true, bump: true, name: wantedName(1), number: 2, collisionCount: 1}},
		{name: "name taken, bumped name holds the data: reuse it renumbered", reuse: ReuseNamed,
			existing: []*appsv1.ControllerRevision{rawRevision(wantedName(1), 1, wantedData), rawRevision(wantedName(0), 2, other)},
			want:     want{renumber: true, bump: true, name: wantedName(1), number: 3, collisionCount: 1}},
		{name: "named rule: equal data under another name is not reused", reuse: ReuseNamed, collision: 2,
			existing: []*appsv1.ControllerRevision{rawRevision(wantedName(0), 1, wantedData)},
			want:     want{create: true, name: wantedName(2), number: 2, collisionCount: 2}},
		{name: "newest-equal rule: equal data under another name is reused", reuse: ReuseNewestEqual, collision: 2,
			existing: []*appsv1.ControllerRevision{rawRevision(wantedName(0), 1, wantedData), rawRevision("s-a", 2, other)},
			want:     want{renumber: true, name: wantedName(0), number: 3, collisionCount: 2}},
		{name: "newest-equal rule: the newest of several equal revisions", reuse: ReuseNewestEqual,
			existing: []*appsv1.ControllerRevision{rawRevision(wantedName(0), 1, wantedData), rawRevision("s-copy", 4, wantedData)},
			want:     want{name: "s-copy", number: 4}},
		{name: "newest-equal rule: bump past names taken by other data", reuse: ReuseNewestEqual,
			existing: []*appsv1.ControllerRevision{rawRevision(wantedName(0), 1, other), rawRevision(wantedName(1), 2, other)},
			want:     want{create: true, bump: true, name: wantedName(2), number: 3, collisionCount: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Choose(tt.existing, tt.collision, wanted(tt.reuse))
			if err != nil {
				t.Fatalf("Choose: %v", err)
			}
			got := outcomeOf(d)
			if got != tt.want {
				t.Errorf("Choose = %+v, want %+v (reason: %s)", got, tt.want, d.Reason)
			}
			if string(d.Update.Data.Raw) != wantedData {
				t.Errorf("Update records %s, want %s", d.Update.Data.Raw, wantedData)
			}
			if tt.want.bump && !strings.Contains(d.Reason, "taken") {
				t.Errorf("reason %q does not mention the collision", d.Reason)
			}
		})
	}
}

func TestChooseCollisionCountExhausted(t *testing.T) {
	existing := []*appsv1.ControllerRevision{rawRevision(wantedName(math.MaxInt32), 1, `{"other":true}`)}
	for _, reuse := range []Reuse{ReuseNewestEqual, ReuseNamed} {
		if d, err := Choose(existing, math.MaxInt32, wanted(reuse)); err == nil {
			t.Errorf("Choose (rule %d) at the last collision count = %+v, want an error", reuse, d)
		}
	}
	d, err := Choose(existing, math.MaxInt32-1, wanted(ReuseNamed))
	if err != nil || d.CollisionCount != math.MaxInt32-1 || !d.Create {
		t.Errorf("Choose below the last count = %+v, %v; want a creation under %d", d, err, math.MaxInt32-1)
	}
	if _, err := Select([]*appsv1.ControllerRevision{occupied(t, withImage("app:2"), ptr.To[int32](math.MaxInt32), 1)},
		testOwner(), cloneSetGVK, withImage("app:2"), ptr.To[int32](math.MaxInt32)); err == nil ||
		!strings.Contains(err.Error(), "CloneSet prod/web") {
		t.Errorf("Select at the last collision count: %v, want an error naming the owner", err)
	}
}
