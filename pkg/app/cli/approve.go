package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// rolloutGVK is Kruise Rollouts' Rollout (openkruise/rollouts), in its stored version.
var rolloutGVK = schema.GroupVersionKind{Group: "rollouts.kruise.io", Version: "v1beta1", Kind: "Rollout"}

// Canary step states of a Rollout's status.canaryStatus.currentStepState.
const (
	stepPaused = "StepPaused"
	stepReady  = "StepReady"
)

// newApproveCommand is kruise-tools' `rollout approve`: a Kruise Rollouts canary paused at a step
// goes on.
func newApproveCommand(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "approve rollout/NAME",
		Short: "Let a Kruise Rollouts canary paused at a step go on (its step state StepPaused becomes StepReady)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := rolloutName(args)
			if err != nil {
				return err
			}
			c, ns, err := env.Client()
			if err != nil {
				return err
			}
			msg, err := approve(cmd.Context(), c, client.ObjectKey{Namespace: ns, Name: name})
			if err != nil {
				return err
			}
			fmt.Fprintln(env.Streams.Out, msg)
			return nil
		},
	}
}

// rolloutName reads rollout/NAME or rollout NAME (rollouts, rollouts.rollouts.kruise.io, ro).
func rolloutName(args []string) (string, error) {
	kind, name, ok := splitKindName(args)
	switch strings.ToLower(kind) {
	case "rollout", "rollouts", "ro", "rollout.rollouts.kruise.io", "rollouts.rollouts.kruise.io":
	default:
		ok = false
	}
	if !ok || name == "" {
		return "", fmt.Errorf("name a Kruise Rollouts Rollout as rollout/NAME or rollout NAME")
	}
	return name, nil
}

// approve moves the Rollout's canary from a paused step on, as kruise-tools does: a merge patch of
// its status. A Rollout not paused at a step is refused, saying what it is doing.
func approve(ctx context.Context, c client.Client, key client.ObjectKey) (string, error) {
	ro := &unstructured.Unstructured{}
	ro.SetGroupVersionKind(rolloutGVK)
	if err := c.Get(ctx, key, ro); err != nil {
		return "", fmt.Errorf("rollout %s: %w", key, err)
	}
	state, _, _ := unstructured.NestedString(ro.Object, "status", "canaryStatus", "currentStepState")
	step, _, _ := unstructured.NestedInt64(ro.Object, "status", "canaryStatus", "currentStepIndex")
	if state != stepPaused {
		return "", fmt.Errorf("rollout %s is not paused at a step (step %d is %q): nothing to approve", key, step, state)
	}
	patch := fmt.Sprintf(`{"status":{"canaryStatus":{"currentStepState":%q}}}`, stepReady)
	if err := c.Status().Patch(ctx, ro, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return "", fmt.Errorf("approve rollout %s: %w", key, err)
	}
	return fmt.Sprintf("rollout.rollouts.kruise.io/%s approved: step %d goes on", key.Name, step), nil
}
