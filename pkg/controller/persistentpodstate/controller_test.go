package persistentpodstate

import (
	"context"
	"maps"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"
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
	scheme, err := kruisescheme.New()
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
	scheme, err := kruisescheme.New()
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

// The generator runs for a workload update only when an annotation OpenKruise's generator reacts
// to changes (not for kruise.io/persistent-pod-annotations alone, nor for a spec change).
func TestGenerationAsked(t *testing.T) {
	set := func(a map[string]string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Annotations: a}}
	}
	base := map[string]string{AutoGenerateAnnotation: "true", RequiredTopologyAnnotation: "zone"}
	with := func(k, v string) map[string]string {
		out := maps.Clone(base)
		out[k] = v
		return out
	}
	for _, tc := range []struct {
		name string
		new  map[string]string
		want bool
	}{
		{"nothing", base, false},
		{"other annotation", with("note", "x"), false},
		{"persistent-pod-annotations", with(PersistentAnnotationsAnnotation, "a"), false},
		{"auto-generate", with(AutoGenerateAnnotation, "false"), true},
		{"required", with(RequiredTopologyAnnotation, "rack"), true},
		{"preferred", with(PreferredTopologyAnnotation, "host"), true},
	} {
		if got := generationAsked(event.UpdateEvent{ObjectOld: set(base), ObjectNew: set(tc.new)}); got != tc.want {
			t.Errorf("%s: %t, want %t", tc.name, got, tc.want)
		}
	}
}

// A custom workload of the whitelist is read through its scale subresource: its pods (selected,
// controlled by it) are recorded, and the state of an ordinal past its replicas is dropped once
// the pod is gone. Out of the whitelist, nothing is recorded.
func TestReconcileCustomWorkload(t *testing.T) {
	scheme, err := kruisescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	game := schema.GroupVersionKind{Group: "games.example.com", Version: "v1", Kind: "GameServerSet"}
	whitelist := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kruise-system", Name: workloadfinder.ConfigurationName},
		Data: map[string]string{workloadfinder.PersistentPodStateWhitelist: `{"workloads":[{"Group":"games.example.com","Version":"v1","Kind":"GameServerSet"}]}`}}
	owned := func(name, node string, ready bool) *corev1.Pod {
		p := ownedPod(name, node, ready)
		p.OwnerReferences[0].APIVersion, p.OwnerReferences[0].Kind, p.OwnerReferences[0].UID = "games.example.com/v1", "GameServerSet", "gss-uid"
		return p
	}
	stranger := ownedPod("db-9", "n1", true) // selected, but another workload's
	obj := pps("", map[string]v1alpha1.PersistentPodStatePodState{"db-2": state("n2", "b")})
	obj.Spec.TargetReference = v1alpha1.PersistentPodStateTargetReference{APIVersion: "games.example.com/v1", Kind: "GameServerSet", Name: "db"}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: nodes["n1"]}}
	scale := interceptor.Funcs{SubResourceGet: func(_ context.Context, _ client.Client, sub string, o, s client.Object, _ ...client.SubResourceGetOption) error {
		if sub != "scale" || o.GetObjectKind().GroupVersionKind() != game || o.GetName() != "db" {
			return apierrors.NewNotFound(schema.GroupResource{Group: game.Group, Resource: "gameserversets"}, o.GetName())
		}
		s.(*unstructured.Unstructured).Object = map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
			"metadata": map[string]any{"name": "db", "namespace": "ns", "uid": "gss-uid"},
			"spec":     map[string]any{"replicas": int64(2)}, "status": map[string]any{"selector": "app=db"}}
		return nil
	}}
	run := func(objs ...client.Object) *v1alpha1.PersistentPodState {
		t.Helper()
		objs = append(objs, obj.DeepCopy(), node, owned("db-0", "n1", true), owned("db-1", "n1", false), stranger)
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(obj).WithInterceptorFuncs(scale).Build()
		r := &Reconciler{Client: c, Finder: &workloadfinder.Finder{Reader: c, Scales: c}, Config: c, Namespace: "kruise-system"}
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "db"}}); err != nil {
			t.Fatal(err)
		}
		got := &v1alpha1.PersistentPodState{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := describe(run(whitelist).Status.PodStates); got != "db-0@n1(a)" {
		t.Errorf("whitelisted: states %q, want db-0@n1(a) (db-1 not ready, db-2 past 2 replicas and gone, db-9 not its pod)", got)
	}
	if got := describe(run().Status.PodStates); got != "db-2@n2(b)" {
		t.Errorf("no whitelist: states %q, want them untouched", got)
	}
}

func TestSupported(t *testing.T) {
	whitelist := []schema.GroupKind{{Group: "games.example.com", Kind: "GameServerSet"}, {Kind: "ReplicationController"}}
	for _, tc := range []struct {
		apiVersion, kind string
		ok, custom       bool
	}{
		{"apps/v1", "StatefulSet", true, false},
		{"apps.kruise.io/v1alpha1", "StatefulSet", true, false},
		{"games.example.com/v2", "GameServerSet", true, true}, // any version of the group
		{"v1", "ReplicationController", true, true},
		{"apps.kruise.io/v1alpha1", "CloneSet", false, true},
		{"games.example.com/v1", "", false, false},
		{"a/b/c", "GameServerSet", false, false},
	} {
		ok, custom := workloadfinder.PodStateSupported(v1alpha1.PersistentPodStateTargetReference{APIVersion: tc.apiVersion, Kind: tc.kind, Name: "x"}, whitelist)
		if ok != tc.ok || (ok && custom != tc.custom) {
			t.Errorf("%s %s: supported %v custom %v, want %v %v", tc.apiVersion, tc.kind, ok, custom, tc.ok, tc.custom)
		}
	}
}
