package workloadfinder

import (
	"context"
	"errors"
	"testing"

	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s, err := kruisescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func meta(name, uid string, owner *metav1.OwnerReference) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid)}
	if owner != nil {
		m.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return m
}

// controller is a controller reference to the workload of kind, name and uid.
func controller(apiVersion, kind, name, uid string) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true)}
}

func selector(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

// workloads are one workload of each known kind, in namespace ns.
func workloads() []client.Object {
	return []client.Object{
		&appsv1.Deployment{ObjectMeta: meta("deploy", "deploy-uid", nil), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](5), Selector: selector("deploy")}},
		&appsv1.ReplicaSet{ObjectMeta: meta("deploy-1", "rs1-uid", controller("apps/v1", "Deployment", "deploy", "deploy-uid")),
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2), Selector: selector("deploy")}},
		&appsv1.ReplicaSet{ObjectMeta: meta("deploy-2", "rs2-uid", controller("apps/v1", "Deployment", "deploy", "deploy-uid")),
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Selector: selector("deploy")}},
		&appsv1.ReplicaSet{ObjectMeta: meta("bare-rs", "bare-rs-uid", nil), Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](4), Selector: selector("rs")}},
		&appsv1.ReplicaSet{ObjectMeta: meta("orphan-rs", "orphan-rs-uid", controller("apps/v1", "Deployment", "gone", "gone-uid")),
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](6), Selector: selector("orphan")}},
		&appsv1.StatefulSet{ObjectMeta: meta("sts", "sts-uid", nil), Spec: appsv1.StatefulSetSpec{Selector: selector("sts")}}, // replicas default 1
		&v1alpha1.CloneSet{ObjectMeta: meta("cs", "cs-uid", nil), Spec: v1alpha1.CloneSetSpec{Replicas: ptr.To[int32](3), Selector: selector("cs")}},
		&v1beta1.StatefulSet{ObjectMeta: meta("asts", "asts-uid", nil), Spec: v1beta1.StatefulSetSpec{Replicas: ptr.To[int32](7), Selector: selector("asts")}},
		&batchv1.Job{ObjectMeta: meta("job", "job-uid", nil), Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2), Selector: selector("job")}},
	}
}

func finder(t *testing.T, objs ...client.Object) *Finder {
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).Build()
	return &Finder{Reader: c, Scales: c}
}

func TestFind(t *testing.T) {
	f := finder(t, workloads()...)
	cases := []struct {
		ref      Ref
		uid      string
		app      string
		replicas int32
	}{
		{Ref{"apps/v1", "Deployment", "deploy"}, "deploy-uid", "deploy", 5},
		{Ref{"apps/v1", "ReplicaSet", "bare-rs"}, "bare-rs-uid", "rs", 4},
		{Ref{"apps/v1", "StatefulSet", "sts"}, "sts-uid", "sts", 1},
		{Ref{"apps.kruise.io/v1alpha1", "CloneSet", "cs"}, "cs-uid", "cs", 3},
		{Ref{"apps.kruise.io/v1beta1", "StatefulSet", "asts"}, "asts-uid", "asts", 7},
		{Ref{"apps.kruise.io/v1alpha1", "StatefulSet", "asts"}, "asts-uid", "asts", 7}, // the group counts, not the version
		{Ref{"apps/v1beta2", "Deployment", "deploy"}, "deploy-uid", "deploy", 5},
		{Ref{"batch/v1", "Job", "job"}, "job-uid", "job", 2}, // its parallelism
	}
	for _, c := range cases {
		t.Run(c.ref.APIVersion+" "+c.ref.Kind, func(t *testing.T) {
			w, err := f.Find(context.Background(), "ns", c.ref)
			if err != nil || w == nil {
				t.Fatalf("Find = %v, %v", w, err)
			}
			if w.Ref != c.ref || w.UID != types.UID(c.uid) || w.Replicas != c.replicas {
				t.Errorf("Find = %+v, want %s uid %s replicas %d", w, c.ref, c.uid, c.replicas)
			}
			if w.LabelSelector == nil || w.LabelSelector.MatchLabels["app"] != c.app || w.Selector.String() != "app="+c.app {
				t.Errorf("selectors %v, %v, want app=%s", w.LabelSelector, w.Selector, c.app)
			}
		})
	}
}

func TestFindNotFound(t *testing.T) {
	f := finder(t, workloads()...)
	for _, ref := range []Ref{
		{"apps/v1", "Deployment", "missing"},
		{"apps/v1", "ReplicaSet", "missing"},
		{"apps/v1", "StatefulSet", "missing"},
		{"apps.kruise.io/v1alpha1", "CloneSet", "missing"},
		{"apps.kruise.io/v1beta1", "StatefulSet", "missing"},
		{"apps/v1", "StatefulSet", "asts"}, // an Advanced StatefulSet is not an apps StatefulSet
	} {
		w, err := f.Find(context.Background(), "ns", ref)
		if err != nil || w != nil {
			t.Errorf("Find(%v) = %+v, %v; want nil, nil", ref, w, err)
		}
		if w, err := f.Find(context.Background(), "other", Ref{"apps/v1", "Deployment", "deploy"}); err != nil || w != nil {
			t.Errorf("Find in another namespace = %+v, %v", w, err)
		}
	}
	if _, err := f.Find(context.Background(), "ns", Ref{"apps/v1/x", "Deployment", "deploy"}); err == nil {
		t.Error("an invalid apiVersion is not an error")
	}
}

// Another kind is read through its scale subresource: spec.replicas and status.selector.
func TestFindThroughScale(t *testing.T) {
	game := schema.GroupVersionKind{Group: "games.example.com", Version: "v1", Kind: "GameServerSet"}
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		SubResourceGet: func(_ context.Context, _ client.Client, sub string, obj, scale client.Object, _ ...client.SubResourceGetOption) error {
			if sub != "scale" || obj.GetObjectKind().GroupVersionKind() != game || obj.GetNamespace() != "ns" {
				return errors.New("unexpected scale read")
			}
			if obj.GetName() != "gss" {
				return apierrors.NewNotFound(schema.GroupResource{Group: game.Group, Resource: "gameserversets"}, obj.GetName())
			}
			scale.(*unstructured.Unstructured).Object = map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
				"metadata": map[string]any{"name": "gss", "namespace": "ns", "uid": "gss-uid"},
				"spec":     map[string]any{"replicas": int64(4)}, "status": map[string]any{"replicas": int64(4), "selector": "app=game,tier in (a,b)"}}
			return nil
		},
	}).Build()
	f := &Finder{Reader: c, Scales: c}
	w, err := f.Find(context.Background(), "ns", Ref{"games.example.com/v1", "GameServerSet", "gss"})
	if err != nil || w == nil {
		t.Fatalf("Find = %v, %v", w, err)
	}
	if w.UID != "gss-uid" || w.Replicas != 4 || w.Selector.String() != "app=game,tier in (a,b)" ||
		w.LabelSelector.MatchLabels["app"] != "game" || len(w.LabelSelector.MatchExpressions) != 1 {
		t.Errorf("Find = %+v (selector %v)", w, w.LabelSelector)
	}
	if w, err := f.Find(context.Background(), "ns", Ref{"games.example.com/v1", "GameServerSet", "missing"}); err != nil || w != nil {
		t.Errorf("Find of a missing one = %+v, %v", w, err)
	}
	if _, err := (&Finder{Reader: c}).Find(context.Background(), "ns", Ref{"games.example.com/v1", "GameServerSet", "gss"}); err == nil {
		t.Error("no error without a scale client")
	}
}

// pod is a Running pod of app app controlled by owner (nil: none).
func pod(name, app string, owner *metav1.OwnerReference) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: meta(name, name+"-uid", owner), Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	p.Labels = map[string]string{"app": app}
	return p
}

func names(pods []*corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, p := range pods {
		out[p.Name] = true
	}
	return out
}

func TestPods(t *testing.T) {
	terminating := pod("cs-terminating", "cs", controller("apps.kruise.io/v1alpha1", "CloneSet", "cs", "cs-uid"))
	terminating.DeletionTimestamp, terminating.Finalizers = ptr.To(metav1.Now()), []string{"example.com/hold"}
	succeeded := pod("cs-succeeded", "cs", controller("apps.kruise.io/v1alpha1", "CloneSet", "cs", "cs-uid"))
	succeeded.Status.Phase = corev1.PodSucceeded
	failed := pod("cs-failed", "cs", controller("apps.kruise.io/v1alpha1", "CloneSet", "cs", "cs-uid"))
	failed.Status.Phase = corev1.PodFailed
	pending := pod("cs-pending", "cs", controller("apps.kruise.io/v1alpha1", "CloneSet", "cs", "cs-uid"))
	pending.Status.Phase = corev1.PodPending
	elsewhere := pod("cs-elsewhere", "cs", controller("apps.kruise.io/v1alpha1", "CloneSet", "cs", "cs-uid"))
	elsewhere.Namespace = "other"
	objs := append(workloads(),
		pod("cs-a", "cs", controller("apps.kruise.io/v1alpha1", "CloneSet", "cs", "cs-uid")),
		pod("cs-b", "cs", controller("apps.kruise.io/v1alpha1", "CloneSet", "cs", "cs-uid")),
		pending, terminating, succeeded, failed, elsewhere,
		pod("cs-unowned", "cs", nil), // matches the selector, controlled by nothing
		pod("cs-foreign", "cs", controller("apps.kruise.io/v1alpha1", "CloneSet", "other", "other-uid")),
		pod("cs-relabelled", "x", controller("apps.kruise.io/v1alpha1", "CloneSet", "cs", "cs-uid")), // released: no longer selected
		pod("cs-owned-only", "cs", &metav1.OwnerReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "cs", UID: "cs-uid"}),
		pod("deploy-a", "deploy", controller("apps/v1", "ReplicaSet", "deploy-1", "rs1-uid")),
		pod("deploy-b", "deploy", controller("apps/v1", "ReplicaSet", "deploy-2", "rs2-uid")),
		pod("deploy-foreign", "deploy", controller("apps/v1", "ReplicaSet", "bare-rs", "bare-rs-uid")),
		pod("rs-a", "rs", controller("apps/v1", "ReplicaSet", "bare-rs", "bare-rs-uid")),
		pod("asts-0", "asts", controller("apps.kruise.io/v1beta1", "StatefulSet", "asts", "asts-uid")),
	)
	f := finder(t, objs...)
	cases := []struct {
		ref  Ref
		want []string
	}{
		{Ref{"apps.kruise.io/v1alpha1", "CloneSet", "cs"}, []string{"cs-a", "cs-b", "cs-pending"}},
		{Ref{"apps/v1", "Deployment", "deploy"}, []string{"deploy-a", "deploy-b"}},
		{Ref{"apps/v1", "ReplicaSet", "bare-rs"}, []string{"rs-a"}},
		{Ref{"apps/v1", "ReplicaSet", "deploy-1"}, []string{"deploy-a"}},
		{Ref{"apps.kruise.io/v1beta1", "StatefulSet", "asts"}, []string{"asts-0"}},
		{Ref{"apps/v1", "StatefulSet", "sts"}, nil},
	}
	for _, c := range cases {
		t.Run(c.ref.Kind+" "+c.ref.Name, func(t *testing.T) {
			w, err := f.Find(context.Background(), "ns", c.ref)
			if err != nil || w == nil {
				t.Fatalf("Find = %v, %v", w, err)
			}
			pods, err := f.Pods(context.Background(), "ns", w)
			if err != nil {
				t.Fatal(err)
			}
			got := names(pods)
			if len(got) != len(c.want) || len(pods) != len(c.want) {
				t.Errorf("Pods = %v, want %v", got, c.want)
			}
			for _, n := range c.want {
				if !got[n] {
					t.Errorf("Pods = %v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestActive(t *testing.T) {
	p := pod("p", "a", nil)
	if !Active(p) {
		t.Error("a running pod is not active")
	}
	p.Status.Phase = corev1.PodPending
	if !Active(p) {
		t.Error("a pending pod is not active")
	}
	for _, phase := range []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed} {
		p.Status.Phase = phase
		if Active(p) {
			t.Errorf("a %s pod is active", phase)
		}
	}
	p.Status.Phase = corev1.PodRunning
	p.DeletionTimestamp = ptr.To(metav1.Now())
	if Active(p) {
		t.Error("a terminating pod is active")
	}
}

func TestReplicasOf(t *testing.T) {
	f := finder(t, workloads()...)
	cs := controller("apps.kruise.io/v1alpha1", "CloneSet", "cs", "cs-uid")
	rs1 := controller("apps/v1", "ReplicaSet", "deploy-1", "rs1-uid")
	rs2 := controller("apps/v1", "ReplicaSet", "deploy-2", "rs2-uid")
	cases := []struct {
		name string
		pods []*corev1.Pod
		want int32
	}{
		{"no pods", nil, 0},
		{"pods of one CloneSet count its replicas once", []*corev1.Pod{pod("a", "cs", cs), pod("b", "cs", cs)}, 3},
		{"pods of two ReplicaSets of one Deployment count the Deployment once",
			[]*corev1.Pod{pod("a", "d", rs1), pod("b", "d", rs2), pod("c", "d", rs1)}, 5},
		{"a ReplicaSet without a Deployment counts its own replicas",
			[]*corev1.Pod{pod("a", "rs", controller("apps/v1", "ReplicaSet", "bare-rs", "bare-rs-uid"))}, 4},
		{"a ReplicaSet whose Deployment is gone counts its own replicas",
			[]*corev1.Pod{pod("a", "o", controller("apps/v1", "ReplicaSet", "orphan-rs", "orphan-rs-uid"))}, 6},
		{"pods without a controller count nothing (as in OpenKruise)", []*corev1.Pod{pod("a", "x", nil), pod("b", "x", nil)}, 0},
		{"a pod owned but not controlled counts nothing",
			[]*corev1.Pod{pod("a", "x", &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "bare-rs", UID: "bare-rs-uid"})}, 0},
		{"pods of a controller that does not exist count nothing",
			[]*corev1.Pod{pod("a", "x", controller("apps.kruise.io/v1alpha1", "CloneSet", "missing", "missing-uid")),
				pod("b", "x", controller("apps.kruise.io/v1alpha1", "CloneSet", "missing", "missing-uid"))}, 0},
		{"a StatefulSet without replicas counts one",
			[]*corev1.Pod{pod("a", "sts", controller("apps/v1", "StatefulSet", "sts", "sts-uid"))}, 1},
		{"everything together", []*corev1.Pod{
			pod("a", "cs", cs), pod("b", "cs", cs), pod("c", "d", rs1), pod("d", "d", rs2),
			pod("e", "rs", controller("apps/v1", "ReplicaSet", "bare-rs", "bare-rs-uid")),
			pod("f", "asts", controller("apps.kruise.io/v1beta1", "StatefulSet", "asts", "asts-uid")),
			pod("g", "x", nil)}, 3 + 5 + 4 + 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := f.ReplicasOf(context.Background(), c.pods)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("ReplicasOf = %d, want %d", got, c.want)
			}
		})
	}
}

// A controller that cannot be read fails the count (a budget must not count on a guess).
func TestReplicasOfReadError(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(workloads()...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("cache down")
		},
	}).Build()
	f := &Finder{Reader: c, Scales: c}
	if _, err := f.ReplicasOf(context.Background(), []*corev1.Pod{pod("a", "cs", controller("apps.kruise.io/v1alpha1", "CloneSet", "cs", "cs-uid"))}); err == nil {
		t.Error("no error")
	}
}
