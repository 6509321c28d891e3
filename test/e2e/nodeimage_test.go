package e2e

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// One NodeImage per node: created for every node (also one added later), carrying the node's labels
// as they change, owned by the node and deleted with it.
func TestNodeImagePerNode(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	matches := func(node *corev1.Node) (bool, string) {
		ni := &appsv1alpha1.NodeImage{}
		if err := c.Get(ctx, client.ObjectKey{Name: node.Name}, ni); err != nil {
			return false, err.Error()
		}
		owned := len(ni.OwnerReferences) == 1 && ni.OwnerReferences[0].UID == node.UID && ni.OwnerReferences[0].Kind == "Node"
		return owned && maps.Equal(ni.Labels, node.Labels), fmt.Sprintf("labels %v (node %v), owners %v", ni.Labels, node.Labels, ni.OwnerReferences)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		harness.Eventually(t, 30*time.Second, "NodeImage of "+n.Name, func() (bool, string) { return matches(n) })
	}

	// A node added later gets one; its labels follow the node's; it goes with the node.
	name := "kwok-extra-" + utilrand.String(5)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{sandbox.NodeTypeLabel: "kwok"},
		Annotations: map[string]string{sandbox.FakeNodeAnnotation: "fake"}}}
	node, err = cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	harness.Eventually(t, 30*time.Second, "NodeImage of the new node", func() (bool, string) { return matches(node) })
	node, err = cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":{"zone":"a"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "NodeImage relabelled", func() (bool, string) { return matches(node) })
	node, err = cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":{"zone":null}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "a removed label removed", func() (bool, string) { return matches(node) })
	if err := cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, time.Minute, "NodeImage deleted with its node", func() (bool, string) {
		err := c.Get(ctx, client.ObjectKey{Name: name}, &appsv1alpha1.NodeImage{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// The NodeImage webhook refuses, with the field path, what OpenKruise's refuses: here a tag
// without createdAt and a duplicate tag.
func TestNodeImageRefusedWithFieldPath(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	at := metav1.Now()
	ni := &appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: "not-a-node-" + utilrand.String(5)},
		Spec: appsv1alpha1.NodeImageSpec{Images: map[string]appsv1alpha1.NodeImageImageSpec{
			"registry.local/app": {Tags: []appsv1alpha1.NodeImageTagSpec{{Tag: "v1", CreatedAt: &at}, {Tag: "v1", CreatedAt: &at}, {Tag: "v2"}}}}}}
	err := c.Create(ctx, ni)
	if err == nil {
		_ = c.Delete(ctx, ni)
	}
	for _, want := range []string{"spec.images[registry.local/app].tags[1].tag: Duplicate value", "spec.images[registry.local/app].tags[2].createdAt: Required value"} {
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("create: %v; want Invalid naming %s", err, want)
		}
	}
}
