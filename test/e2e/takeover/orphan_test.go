package takeover

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

// `kubectl delete clone X --cascade=orphan` completes after the takeover: the garbage collector
// removes the owner reference from every revision (OpenKruise's and the one Kruise wrote for the
// rollout), pod and claim, and the pods keep running. Runs after the rollout test.
func orphanDelete(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"cs-plain", "cs-vct"} {
		obj := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name}}
		uid := cloneSet(t, name).UID
		if err := kc.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(t, time.Minute, "CloneSet "+name+" deleted with its dependents orphaned", func() (bool, string) {
			err := kc.Get(ctx, client.ObjectKeyFromObject(obj), &appsv1alpha1.CloneSet{})
			if apierrors.IsNotFound(err) {
				return true, ""
			}
			got := &appsv1alpha1.CloneSet{}
			_ = kc.Get(ctx, client.ObjectKeyFromObject(obj), got)
			return false, fmt.Sprintf("still there (finalizers %v): %v", got.Finalizers, err)
		})
		owned := func(refs []metav1.OwnerReference) bool {
			for _, r := range refs {
				if r.UID == uid {
					return true
				}
			}
			return false
		}
		revs, err := cs.AppsV1().ControllerRevisions(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil || len(revs.Items) < 2 {
			t.Fatalf("revisions of %s: %v, %v", name, revisionNames(revs.Items), err)
		}
		for _, r := range revs.Items {
			if owned(r.OwnerReferences) {
				t.Errorf("revision %s still owned by the deleted %s", r.Name, name)
			}
		}
		pods, err := cs.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if owned(p.OwnerReferences) || p.DeletionTimestamp != nil || p.UID != objs.podUIDs[p.Name] {
				t.Errorf("pod %s: owners %v, deleting %v, uid %s (loaded %s)", p.Name, p.OwnerReferences, p.DeletionTimestamp != nil,
					p.UID, objs.podUIDs[p.Name])
			}
		}
		if want := int(*cloneSetSpecReplicas(name)); len(pods.Items) != want {
			t.Errorf("%d pods of %s left, want %d", len(pods.Items), name, want)
		}
		claims, err := cs.CoreV1().PersistentVolumeClaims(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range claims.Items {
			if owned(c.OwnerReferences) || c.DeletionTimestamp != nil {
				t.Errorf("claim %s still owned or deleted", c.Name)
			}
		}
	}
}

// cloneSetSpecReplicas is the fixture's spec.replicas of a CloneSet.
func cloneSetSpecReplicas(name string) *int32 {
	for _, c := range fixture.CloneSets {
		if c.Name == name {
			return c.Spec.Replicas
		}
	}
	return nil
}
