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
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
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
	t.Parallel()
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

// A tag no kruise-daemon answers (the sandbox's kwok nodes run none) fails a minute after its
// createdAt, as OpenKruise's controller fails it: status Failed with OpenKruise's message, counted,
// and a Warning event PullImageFailed on the NodeImage.
func TestNodeImageUnansweredTagFails(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	name := "kwok-silent-" + utilrand.String(5)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{sandbox.NodeTypeLabel: "kwok"},
		Annotations: map[string]string{sandbox.FakeNodeAnnotation: "fake"}}}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	ni := &appsv1alpha1.NodeImage{}
	harness.Eventually(t, 30*time.Second, "NodeImage of the new node", func() (bool, string) {
		err := c.Get(ctx, client.ObjectKey{Name: name}, ni)
		return err == nil, fmt.Sprint(err)
	})
	// Created 58 s ago: due in about 2 s.
	created := metav1.NewTime(time.Now().Add(-58 * time.Second))
	patch := fmt.Sprintf(`{"spec":{"images":{"registry.local/app":{"tags":[{"tag":"v1","version":1,"createdAt":%q}]}}}}`,
		created.UTC().Format(time.RFC3339))
	if err := c.Patch(ctx, ni, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the unanswered tag failed", func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, ni); err != nil {
			return false, err.Error()
		}
		tags := ni.Status.ImageStatuses["registry.local/app"].Tags
		ok := len(tags) == 1 && tags[0].Phase == appsv1alpha1.NodeImagePullFailed && tags[0].Version == 1 &&
			tags[0].Message == "node has not responded for a long time" && ni.Status.Failed == 1 && ni.Status.Desired == 1
		return ok, fmt.Sprintf("%+v", ni.Status)
	})
	harness.Eventually(t, 30*time.Second, "a PullImageFailed event", func() (bool, string) {
		evs, err := cs.EventsV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + name})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Reason == "PullImageFailed" && strings.Contains(e.Note, "registry.local/app:v1") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})
}
