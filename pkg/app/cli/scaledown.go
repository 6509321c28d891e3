package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func newScaledownCommand(env *Env) *cobra.Command {
	var pods []string
	cmd := &cobra.Command{
		Use:   "scaledown clone/NAME --pods a,b",
		Short: "Delete the given pods of a CloneSet and lower its replicas by as many (scaleStrategy.podsToDelete)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(pods) == 0 {
				return fmt.Errorf("--pods names the pods to remove")
			}
			c, cs, err := env.loadCloneSet(cmd.Context(), args, "scaledown")
			if err != nil {
				return err
			}
			before := cs.DeepCopy()
			added := int32(0)
			for _, p := range pods {
				if !slices.Contains(cs.Spec.ScaleStrategy.PodsToDelete, p) {
					cs.Spec.ScaleStrategy.PodsToDelete = append(cs.Spec.ScaleStrategy.PodsToDelete, p)
					added++
				}
			}
			replicas := int32(1)
			if cs.Spec.Replicas != nil {
				replicas = *cs.Spec.Replicas
			}
			replicas = max(replicas-added, 0)
			cs.Spec.Replicas = &replicas
			// The optimistic lock: replicas must be lowered from the value read.
			if err := c.Patch(cmd.Context(), cs, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
				return err
			}
			fmt.Fprintf(env.Streams.Out, "cloneset.apps.kruise.io/%s scaled down to %d replicas, deleting %s\n", cs.Name, replicas, strings.Join(pods, ", "))
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&pods, "pods", nil, "the pods to delete (comma separated)")
	return cmd
}

// loadCloneSet reads the CloneSet the arguments name for command, which drives CloneSets only.
func (e *Env) loadCloneSet(ctx context.Context, args []string, command string) (client.Client, *appsv1alpha1.CloneSet, error) {
	c, k, key, err := e.target(args)
	if err != nil {
		return nil, nil, err
	}
	if k != CloneSetKind {
		return nil, nil, fmt.Errorf("%s drives CloneSets only (clone/NAME), not %ss", command, k.Noun)
	}
	cs := &appsv1alpha1.CloneSet{}
	if err := c.Get(ctx, key, cs); err != nil {
		return nil, nil, err
	}
	return c, cs, nil
}
