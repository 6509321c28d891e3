package cli

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// rollout is a Kruise Rollouts Rollout at step 1 in state.
func rollout(state string) *unstructured.Unstructured {
	ro := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"namespace": "ns", "name": "web"},
		"status":   map[string]any{"canaryStatus": map[string]any{"currentStepIndex": int64(1), "currentStepState": state}},
	}}
	ro.SetGroupVersionKind(rolloutGVK)
	return ro
}

// `rollout approve` moves a canary paused at a step to StepReady through the status, and refuses a
// Rollout that is not paused, or a name that is not a Rollout's.
func TestApprove(t *testing.T) {
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(rolloutGVK, &unstructured.Unstructured{})
	ctx, key := context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(rollout(stepPaused)).WithStatusSubresource(rollout(stepPaused)).Build()
	msg, err := approve(ctx, c, key)
	if err != nil || !strings.Contains(msg, "step 1 goes on") {
		t.Fatalf("approve: %q, %v", msg, err)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(rolloutGVK)
	if err := c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if state, _, _ := unstructured.NestedString(got.Object, "status", "canaryStatus", "currentStepState"); state != stepReady {
		t.Errorf("step state %q after approve, want %s", state, stepReady)
	}
	if _, err := approve(ctx, c, key); err == nil || !strings.Contains(err.Error(), "not paused") {
		t.Errorf("approving a step already ready: %v, want refused", err)
	}
	for _, args := range [][]string{{"clone/web"}, {"rollout"}, {"rollout/"}} {
		if _, err := rolloutName(args); err == nil {
			t.Errorf("%v accepted as a Rollout", args)
		}
	}
	if name, err := rolloutName([]string{"rollouts.rollouts.kruise.io", "web"}); err != nil || name != "web" {
		t.Errorf("full resource name: %q, %v", name, err)
	}
}
