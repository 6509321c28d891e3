package podcontrol

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/pkg/core/revision"
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
