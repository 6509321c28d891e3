package persistentpodstate

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/workloadfinder"
)

func ownedPod(name, node string, ready bool) *corev1.Pod {
	p := pod(name, node, ready, nil)
	p.Namespace = "ns"
	p.Labels = map[string]string{"app": "db"}
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Name: "db", UID: "set", Controller: ptr.To(true)}}
	return p
}

// Reconcile reads the workload's ordinals (ordinals.start, reserveOrdinals ranges), its pods and
// their nodes, and writes the planned status.
func TestReconcileRecordsAndDrops(t *testing.T) {
	scheme, err := apis.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	set := &v1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "set"},
		Spec: v1beta1.StatefulSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Ordinals: &appsv1.StatefulSetOrdinals{Start: 2}, ReserveOrdinals: []intstr.IntOrString{intstr.FromString("3-4")}}}
	// Replicas are db-2 and db-5; db-3 was scaled away and is gone, db-9 never was a replica.
	obj := pps("", map[string]v1alpha1.PersistentPodStatePodState{"db-3": state("n1", "a"), "db-5": state("n2", "b"), "db-9": state("n2", "b")})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: nodes["n1"]}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(set, obj, node, ownedPod("db-2", "n1", true), ownedPod("db-5", "n2", false)).
		WithStatusSubresource(obj).Build()
	r := &Reconciler{Client: c, Finder: &workloadfinder.Finder{Reader: c}}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "db"}}); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.PersistentPodState{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	if d := describe(got.Status.PodStates); d != "db-2@n1(a) db-5@n2(b)" || got.Status.ObservedGeneration != obj.Generation {
		t.Errorf("states %q at generation %d, want db-2@n1(a) db-5@n2(b) at %d", d, got.Status.ObservedGeneration, obj.Generation)
	}
}

// The Generator creates the PersistentPodState its workload's annotations ask for, and deletes it
// once they no longer do.
func TestGeneratorCreatesAndDeletes(t *testing.T) {
	scheme, err := apis.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u",
		Annotations: map[string]string{AutoGenerateAnnotation: "true", PreferredTopologyAnnotation: corev1.LabelHostname}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(set).Build()
	g := NewGenerators(c, nil)[0]
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}}
	if _, err := g.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.PersistentPodState{}
	if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.TargetReference.APIVersion != "apps/v1" || len(got.Spec.PreferredPersistentTopology) != 1 || !controlledBy(got, "u") {
		t.Errorf("generated %+v", got)
	}
	set.Annotations = nil
	if err := c.Update(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), req.NamespacedName, got); !apierrors.IsNotFound(err) {
		t.Errorf("after the annotation went: %v", err)
	}
}
