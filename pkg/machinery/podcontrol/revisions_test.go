package podcontrol

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"
)

// Read by the controller index or by the selector, a workload observes the same revisions: those
// it controls that its selector matches; another workload's, with the same labels, are not its.
func TestObserveRevisionsIndexed(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}
	owner := func(name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name)}}
	}
	rev := func(name, ownerName string, lbls map[string]string) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: lbls,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner(ownerName), gvk)}}, Revision: 1}
	}
	app := map[string]string{"app": "web"}
	scheme := runtime.NewScheme()
	if err := appsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithIndex(&appsv1.ControllerRevision{}, ControllerIndex, controllerUID).
		WithObjects(rev("a-1", "a", app), rev("a-2", "a", app), rev("a-old", "a", map[string]string{"app": "before"}),
			rev("b-1", "b", app)).Build()
	sel := labels.SelectorFromSet(app)
	in := revision.Input{Template: &corev1.PodTemplateSpec{}}
	for _, indexed := range []bool{false, true} {
		revs, err := ObserveRevisions(context.Background(), client.Reader(c), indexed, owner("a"), gvk, sel, in, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for name := range revs.ByName {
			names = append(names, name)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"a-1", "a-2"}) {
			t.Errorf("indexed %v: revisions %v, want [a-1 a-2]", indexed, names)
		}
		if !revs.Decision.Create || revs.Decision.Update.Revision != 2 {
			t.Errorf("indexed %v: decision %+v, want a new revision 2", indexed, revs.Decision)
		}
	}
}

// A workload adopts the revisions its selector matches that have no controller (its predecessor's,
// orphaned), and no other: not another controller's, not one its selector does not match.
func TestAdoptRevisions(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1beta1", Kind: "DaemonSet"}
	owner := &appsv1beta1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent", UID: "new"}}
	other := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other", UID: "other"}}
	rev := func(name string, lbls map[string]string, refs ...metav1.OwnerReference) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name), Labels: lbls,
			OwnerReferences: refs}, Revision: 1}
	}
	app := map[string]string{"app": "agent"}
	c := fake.NewClientBuilder().WithScheme(testKruiseScheme(t)).WithObjects(owner, rev("orphan", app), rev("theirs", app, *metav1.NewControllerRef(other, gvk)),
		rev("elsewhere", map[string]string{"app": "db"})).Build()
	n, err := AdoptRevisions(context.Background(), c, c, owner, gvk, labels.SelectorFromSet(app))
	if err != nil || n != 1 {
		t.Fatalf("adopted %d (%v), want 1", n, err)
	}
	for name, want := range map[string]types.UID{"orphan": "new", "theirs": "other", "elsewhere": ""} {
		got := &appsv1.ControllerRevision{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, got); err != nil {
			t.Fatal(err)
		}
		var uid types.UID
		if ref := metav1.GetControllerOf(got); ref != nil {
			uid = ref.UID
		}
		if uid != want {
			t.Errorf("revision %s controlled by %q, want %q", name, uid, want)
		}
	}
}

// A revision the workload's predecessor (its kind and name, another UID) still holds is waited
// for: the orphans are adopted, and the observation fails with a PredecessorError until the garbage
// collector releases it.
func TestAdoptRevisionsWaitsForThePredecessor(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}
	owner := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api", UID: "new"}}
	predecessor := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api", UID: "old"}}
	app := map[string]string{"app": "api"}
	held := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api-1", UID: "1", Labels: app,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(predecessor, gvk)}}, Revision: 1}
	orphan := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api-2", UID: "2", Labels: app}, Revision: 2}
	c := fake.NewClientBuilder().WithScheme(testKruiseScheme(t)).WithObjects(owner, held, orphan).Build()
	n, err := AdoptRevisions(context.Background(), c, c, owner, gvk, labels.SelectorFromSet(app))
	var pe *PredecessorError
	if n != 1 || !errors.As(err, &pe) || pe.What != "revisions" || len(pe.Names) != 1 || pe.Names[0] != "api-1" {
		t.Fatalf("adopted %d, error %v; want 1 adopted and a PredecessorError naming api-1", n, err)
	}
	// Being deleted, it adopts nothing.
	gone := owner.DeepCopy()
	gone.DeletionTimestamp, gone.Finalizers = &metav1.Time{Time: time.Now()}, []string{metav1.FinalizerOrphanDependents}
	c = fake.NewClientBuilder().WithScheme(testKruiseScheme(t)).WithObjects(gone, orphan.DeepCopy()).Build()
	if n, err := AdoptRevisions(context.Background(), c, c, owner, gvk, labels.SelectorFromSet(app)); n != 0 || err != nil {
		t.Errorf("an owner being deleted (as the API server shows it) adopted %d (%v), want none", n, err)
	}
	if !HeldByPredecessor(held, owner, gvk) || HeldByPredecessor(held, predecessor, gvk) ||
		HeldByPredecessor(held, owner, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "CloneSet"}) {
		t.Error("HeldByPredecessor: want true only for another UID of the same group, kind and name")
	}
}

func testKruiseScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme, err := kruisescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	return scheme
}
