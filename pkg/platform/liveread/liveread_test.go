package liveread

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestByName(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "x", Labels: map[string]string{"in": "a"}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "x", Labels: map[string]string{"in": "b"}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "y"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
	).WithIndex(&corev1.ConfigMap{}, "metadata.name", name).WithIndex(&corev1.Namespace{}, "metadata.name", name).Build()
	ctx := context.Background()
	cm, ok, err := ByName[*corev1.ConfigMap](ctx, c, &corev1.ConfigMapList{}, "b", "x")
	if err != nil || !ok || cm.Labels["in"] != "b" {
		t.Fatalf("b/x: %v %v %v", cm, ok, err)
	}
	if _, ok, err := ByName[*corev1.ConfigMap](ctx, c, &corev1.ConfigMapList{}, "a", "y"); ok || err != nil {
		t.Fatalf("a/y: found %v, %v; want none", ok, err)
	}
	ns, ok, err := ByName[*corev1.Namespace](ctx, c, &corev1.NamespaceList{}, "", "b")
	if err != nil || !ok || ns.Name != "b" {
		t.Fatalf("namespace b: %v %v %v", ns, ok, err)
	}
	if _, _, err := ByName[*corev1.Secret](ctx, c, &corev1.ConfigMapList{}, "b", "y"); err == nil {
		t.Fatal("a ConfigMap read as a Secret: no error")
	}
}

// name indexes objects by name, as the API server's field selector metadata.name selects them.
func name(o client.Object) []string { return []string{o.GetName()} }
