package takeover

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func cloneSet(t *testing.T, name string) *appsv1alpha1.CloneSet {
	t.Helper()
	c := &appsv1alpha1.CloneSet{}
	if err := kc.Get(context.Background(), client.ObjectKey{Namespace: Namespace, Name: name}, c); err != nil {
		t.Fatal(err)
	}
	return c
}
