package sidecarset

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// rvSet is SidecarSet "mesh" on image, with status.collisionCount cc.
func rvSet(image string, cc *int32) *v1beta1.SidecarSet {
	return &v1beta1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: "mesh", UID: "mesh-uid", Labels: map[string]string{"team": "net"},
			Annotations: map[string]string{"note": "x"}},
		Spec:   v1beta1.SidecarSetSpec{Containers: []v1beta1.SidecarSetContainer{{Container: corev1.Container{Name: "envoy", Image: image}}}},
		Status: v1beta1.SidecarSetStatus{CollisionCount: cc},
	}
}

// rvRevision is the revision recording set's spec under collision count cc, numbered number,
// named name instead when name is not empty.
func rvRevision(t *testing.T, set *v1beta1.SidecarSet, cc int32, number int64, name string) *appsv1.ControllerRevision {
	t.Helper()
	data, err := sidecarrules.RevisionData(&set.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if name == "" {
		if name, err = sidecarrules.RevisionName(set, &cc); err != nil {
			t.Fatal(err)
		}
	}
	rev := newRevision(set, "kruise-system", name, data)
	rev.Revision = number
	return rev
}

func TestPlanRevision(t *testing.T) {
	v1, v2 := rvSet("envoy:1", nil), rvSet("envoy:2", nil)
	name := func(set *v1beta1.SidecarSet, cc int32) string {
		n, err := sidecarrules.RevisionName(set, &cc)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	tests := []struct {
		name               string
		set                *v1beta1.SidecarSet
		revs               func(t *testing.T) []*appsv1.ControllerRevision
		create, renumber   bool
		wantName           string
		wantNumber         int64
		wantCollisionCount int32
	}{
		{name: "new spec: create max+1", set: v2,
			revs: func(t *testing.T) []*appsv1.ControllerRevision {
				return []*appsv1.ControllerRevision{rvRevision(t, v1, 0, 4, "")}
			},
			create: true, wantName: name(v2, 0), wantNumber: 5},
		{name: "rollback: the older revision renumbered", set: v1,
			revs: func(t *testing.T) []*appsv1.ControllerRevision {
				return []*appsv1.ControllerRevision{rvRevision(t, v1, 0, 1, ""), rvRevision(t, v2, 0, 2, "")}
			},
			renumber: true, wantName: name(v1, 0), wantNumber: 3},
		{name: "name held by other data: the count is raised", set: v2,
			revs: func(t *testing.T) []*appsv1.ControllerRevision {
				return []*appsv1.ControllerRevision{rvRevision(t, v1, 0, 1, name(v2, 0))}
			},
			create: true, wantName: name(v2, 1), wantNumber: 2, wantCollisionCount: 1},
		{name: "same data under another collision count: not reused (ReuseNamed)", set: rvSet("envoy:1", ptr.To[int32](1)),
			revs: func(t *testing.T) []*appsv1.ControllerRevision {
				return []*appsv1.ControllerRevision{rvRevision(t, v1, 0, 1, "")}
			},
			create: true, wantName: name(v1, 1), wantNumber: 2, wantCollisionCount: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := planRevision(tt.set, tt.revs(t), "kruise-system")
			if err != nil {
				t.Fatalf("planRevision: %v", err)
			}
			if d.Create != tt.create || d.Renumber != tt.renumber || d.Update.Name != tt.wantName ||
				d.Update.Revision != tt.wantNumber || d.CollisionCount != tt.wantCollisionCount {
				t.Errorf("planRevision = %+v, want create %v renumber %v %s (%d) collision count %d",
					d, tt.create, tt.renumber, tt.wantName, tt.wantNumber, tt.wantCollisionCount)
			}
			if d.Update.Namespace != "kruise-system" || d.Update.Labels[sidecarrules.RevisionOwnerLabel] != "mesh" ||
				d.Update.Labels["team"] != "net" || !metav1.IsControlledBy(d.Update, tt.set) {
				t.Errorf("revision %s is not the SidecarSet's: %+v", d.Update.Name, d.Update.ObjectMeta)
			}
		})
	}
}
