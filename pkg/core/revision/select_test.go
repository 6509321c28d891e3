package revision

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
)

func TestSelect(t *testing.T) {
	v1, v2, v3 := withImage("app:1"), withImage("app:2"), withImage("app:3")
	type want = outcome
	tests := []struct {
		name      string
		existing  func(t *testing.T) []*appsv1.ControllerRevision
		in        Input
		collision *int32
		want      want
	}{
		{
			name:     "no history: create revision 1",
			existing: func(*testing.T) []*appsv1.ControllerRevision { return nil },
			in:       v1,
			want:     want{create: true, name: "web-" + Hash(v1, nil), number: 1},
		},
		{
			name: "template of the newest revision: reuse as is",
			existing: func(t *testing.T) []*appsv1.ControllerRevision {
				return []*appsv1.ControllerRevision{mustNew(t, v1, 1, nil), mustNew(t, v2, 2, nil)}
			},
			in:   v2,
			want: want{name: "web-" + Hash(v2, nil), number: 2},
		},
		{
			name: "rollback to an older revision: reuse it renumbered to max+1",
			existing: func(t *testing.T) []*appsv1.ControllerRevision {
				return []*appsv1.ControllerRevision{mustNew(t, v2, 5, nil), mustNew(t, v1, 3, nil)}
			},
			in:   v1,
			want: want{renumber: true, name: "web-" + Hash(v1, nil), number: 6},
		},
		{
			name: "new template: create max+1",
			existing: func(t *testing.T) []*appsv1.ControllerRevision {
				return []*appsv1.ControllerRevision{mustNew(t, v1, 4, nil), mustNew(t, v2, 9, nil)}
			},
			in:   v3,
			want: want{create: true, name: "web-" + Hash(v3, nil), number: 10},
		},
		{
			name: "equal revision made under another collision count is reused, not recreated",
			existing: func(t *testing.T) []*appsv1.ControllerRevision {
				return []*appsv1.ControllerRevision{mustNew(t, v1, 1, ptr.To[int32](2)), mustNew(t, v2, 2, nil)}
			},
			in:        v1,
			collision: ptr.To[int32](3),
			want:      want{renumber: true, name: "web-" + Hash(v1, ptr.To[int32](2)), number: 3, collisionCount: 3},
		},
		{
			name: "duplicates of the desired template: the newest is used",
			existing: func(t *testing.T) []*appsv1.ControllerRevision {
				old := mustNew(t, v1, 2, nil)
				old.Name = "web-copy"
				return []*appsv1.ControllerRevision{old, mustNew(t, v1, 4, nil), mustNew(t, v2, 3, nil)}
			},
			in:   v1,
			want: want{name: "web-" + Hash(v1, nil), number: 4},
		},
		{
			name: "existing collision count is kept for a new revision",
			existing: func(t *testing.T) []*appsv1.ControllerRevision {
				return []*appsv1.ControllerRevision{mustNew(t, v1, 1, ptr.To[int32](1))}
			},
			in:        v2,
			collision: ptr.To[int32](1),
			want:      want{create: true, name: "web-" + Hash(v2, ptr.To[int32](1)), number: 2, collisionCount: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Select(tt.existing(t), testOwner(), cloneSetGVK, tt.in, tt.collision)
			if err != nil {
				t.Fatalf("Select: %v", err)
			}
			got := outcomeOf(d)
			if got != tt.want {
				t.Errorf("Select = %+v, want %+v (reason: %s)", got, tt.want, d.Reason)
			}
			if d.Reason == "" {
				t.Error("Select gave no reason")
			}
			if tpl, err := TemplateOf(d.Update); err != nil || tpl.Spec.Containers[0].Image != tt.in.Template.Spec.Containers[0].Image {
				t.Errorf("Update records %v (%v), want the desired template", tpl, err)
			}
		})
	}
}

// occupied is a revision named as in would be under collisionCount, but recording other content.
func occupied(t *testing.T, in Input, collisionCount *int32, number int64) *appsv1.ControllerRevision {
	r := mustNew(t, withImage("app:squatter"), number, nil)
	r.Name = Name("web", Hash(in, collisionCount))
	return r
}

func TestSelectCollision(t *testing.T) {
	in := withImage("app:2")
	tests := []struct {
		name      string
		existing  func(t *testing.T) []*appsv1.ControllerRevision
		collision *int32
		wantCount int32
	}{
		{
			name: "name taken by other content: bump once",
			existing: func(t *testing.T) []*appsv1.ControllerRevision {
				return []*appsv1.ControllerRevision{occupied(t, in, nil, 1)}
			},
			wantCount: 1,
		},
		{
			name: "bumped name taken too: bump until free",
			existing: func(t *testing.T) []*appsv1.ControllerRevision {
				return []*appsv1.ControllerRevision{occupied(t, in, nil, 1), occupied(t, in, ptr.To[int32](1), 2)}
			},
			wantCount: 2,
		},
		{
			name: "bump from a recorded collision count",
			existing: func(t *testing.T) []*appsv1.ControllerRevision {
				return []*appsv1.ControllerRevision{occupied(t, in, ptr.To[int32](5), 3)}
			},
			collision: ptr.To[int32](5),
			wantCount: 6,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			existing := tt.existing(t)
			d, err := Select(existing, testOwner(), cloneSetGVK, in, tt.collision)
			if err != nil {
				t.Fatalf("Select: %v", err)
			}
			wantName := Name("web", Hash(in, &tt.wantCount))
			if !d.Create || d.Renumber || !d.CollisionCountBump || d.CollisionCount != tt.wantCount ||
				d.Update.Name != wantName || d.Update.Revision != MaxRevision(existing)+1 {
				t.Errorf("Select = %+v, want a bump to %d and creation of %s", d, tt.wantCount, wantName)
			}
			if d.Update.Labels[HashLabel] != Hash(in, &tt.wantCount) {
				t.Errorf("hash label = %q, want %q", d.Update.Labels[HashLabel], Hash(in, &tt.wantCount))
			}
			if !strings.Contains(d.Reason, "taken") {
				t.Errorf("reason %q does not mention the collision", d.Reason)
			}
			for _, r := range existing {
				if r.Name == d.Update.Name {
					t.Errorf("Update reuses the taken name %s", r.Name)
				}
			}
		})
	}
}

func TestSelectSharesNoMemory(t *testing.T) {
	existing := []*appsv1.ControllerRevision{
		mustNew(t, withImage("app:1"), 1, nil), mustNew(t, withImage("app:2"), 2, nil)}
	before := []*appsv1.ControllerRevision{existing[0].DeepCopy(), existing[1].DeepCopy()}
	d, err := Select(existing, testOwner(), cloneSetGVK, withImage("app:1"), nil)
	if err != nil || !d.Renumber {
		t.Fatalf("Select = %+v, %v; want a renumbering", d, err)
	}
	d.Update.Labels["x"] = "y"
	d.Update.Data.Raw[0] = ' '
	if !reflect.DeepEqual(existing, before) {
		t.Error("Select or a change to its Update modified the existing revisions")
	}
}

func TestSelectRejectsMissingTemplate(t *testing.T) {
	if _, err := Select(nil, testOwner(), cloneSetGVK, Input{}, nil); err == nil {
		t.Error("Select without a template succeeded")
	}
}
