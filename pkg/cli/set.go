package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func newSetCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{Use: "set", Short: "Set fields of a CloneSet"}
	cmd.AddCommand(&cobra.Command{
		Use:   "image clone/NAME CONTAINER=IMAGE ...",
		Short: "Set container images (applied in place where possible)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, cs, err := getCloneSet(cmd, env, args[:1])
			if err != nil {
				return err
			}
			before := cs.DeepCopy()
			for _, a := range args[1:] {
				name, image, ok := strings.Cut(a, "=")
				if !ok || name == "" || image == "" {
					return fmt.Errorf("%q is not CONTAINER=IMAGE", a)
				}
				found := false
				for _, list := range [][]corev1.Container{cs.Spec.Template.Spec.Containers, cs.Spec.Template.Spec.InitContainers} {
					for i := range list {
						if list[i].Name == name || name == "*" {
							list[i].Image, found = image, true
						}
					}
				}
				if !found {
					return fmt.Errorf("cloneset %q has no container %q", cs.Name, name)
				}
			}
			if err := c.Patch(cmd.Context(), cs, client.MergeFrom(before)); err != nil {
				return err
			}
			fmt.Fprintf(env.Streams.Out, "cloneset.apps.kruise.io/%s image updated\n", cs.Name)
			return nil
		},
	})
	return cmd
}

func newScaledownCommand(env *Env) *cobra.Command {
	var pods []string
	cmd := &cobra.Command{
		Use:   "scaledown clone/NAME --pods a,b",
		Short: "Delete the given pods of a CloneSet and lower its replicas by as many (scaleStrategy.podsToDelete)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(pods) == 0 {
				return fmt.Errorf("--pods names the pods to remove")
			}
			c, cs, err := getCloneSet(cmd, env, args)
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
