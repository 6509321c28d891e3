package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/registrationmark"
	"github.com/kruise-ng/kruise/test/harness"
)

// Issue 33: a budget, a spread and a PersistentPodState each say, in a condition of their
// current generation, whether the API server sends Kruise what their webhook entries select —
// so that a user (or `kubectl wait --for=condition=ProtectionRegistered`) knows when a new budget
// holds, and sees it when one cannot be registered.
func TestBudgetSpreadAndStateSayTheyAreRegistered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	pub := maxOneBudget(ns, "guard", "web", 2)
	spread := newSpread(ns, "web", 1)
	pps := &appsv1alpha1.PersistentPodState{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: appsv1alpha1.PersistentPodStateSpec{
			TargetReference:            appsv1alpha1.PersistentPodStateTargetReference{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Name: "db"},
			RequiredPersistentTopology: &appsv1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{ppsZoneLabel}}}}
	cases := []struct {
		obj  client.Object
		cond registrationmark.Condition
		of   func(client.Object) []metav1.Condition
	}{
		{pub, registrationmark.BudgetProtection, func(o client.Object) []metav1.Condition {
			return o.(*policyv1alpha1.PodUnavailableBudget).Status.Conditions
		}},
		{spread, registrationmark.SpreadPlacement, func(o client.Object) []metav1.Condition {
			return o.(*appsv1alpha1.WorkloadSpread).Status.Conditions
		}},
		{pps, registrationmark.PersistentPodStateInjection, func(o client.Object) []metav1.Condition {
			return o.(*appsv1alpha1.PersistentPodState).Status.Conditions
		}},
	}
	for _, k := range cases {
		if err := c.Create(ctx, k.obj); err != nil {
			t.Fatal(err)
		}
	}
	registered := func(obj client.Object, cond registrationmark.Condition, of func(client.Object) []metav1.Condition) {
		t.Helper()
		got := obj.DeepCopyObject().(client.Object)
		harness.Eventually(t, 60*time.Second, fmt.Sprintf("%T %s: %s", obj, obj.GetName(), cond.Type), func() (bool, string) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
				return false, err.Error()
			}
			cur := meta.FindStatusCondition(of(got), cond.Type)
			return cur != nil && cur.Status == metav1.ConditionTrue && cur.Reason == registrationmark.ReasonRegistered &&
				cur.ObservedGeneration == got.GetGeneration(), fmt.Sprintf("generation %d: %+v", got.GetGeneration(), cur)
		})
	}
	for _, k := range cases {
		registered(k.obj, k.cond, k.of)
	}
	// A new generation is registered in its turn.
	next := &policyv1alpha1.PodUnavailableBudget{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pub), next); err != nil {
		t.Fatal(err)
	}
	next.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	if err := c.Update(ctx, next); err != nil {
		t.Fatal(err)
	}
	if next.Generation < 2 {
		t.Fatalf("generation %d after a spec change", next.Generation)
	}
	registered(next, cases[0].cond, cases[0].of)
}
