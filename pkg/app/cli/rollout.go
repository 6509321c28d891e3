package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func newRolloutCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{Use: "rollout", Short: "Manage the rollout of a CloneSet, an Advanced StatefulSet or an Advanced DaemonSet"}
	cmd.AddCommand(withFiles(env, newStatusCommand(env), true), withFiles(env, newPauseCommand(env, true), false),
		withFiles(env, newPauseCommand(env, false), false), withFiles(env, newHistoryCommand(env), false),
		withFiles(env, newUndoCommand(env), false), withFiles(env, newRestartCommand(env), false), newPlanCommand(env), newApproveCommand(env))
	return cmd
}

// ErrStuck is returned when a rollout has exceeded its progress deadline.
var ErrStuck = errors.New("rollout exceeded its progress deadline")

func newStatusCommand(env *Env) *cobra.Command {
	var timeout time.Duration
	o := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status " + workloadUse,
		Short: "Show the rollout's progress until it is done (exit 2 when it is stuck)",
		Long: "Show the rollout's progress until it is done (exit 2 when it is stuck). --revision=N fails unless the " +
			"update revision is revision N (as rollout history numbers them); -d/--detail prints, under each progress " +
			"line, the pods not yet done: those not at the update revision, then those at it not ready.",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, k, key, err := env.target(args)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			last := ""
			for {
				w, err := getWorkload(ctx, c, k, key)
				if err != nil {
					return err
				}
				msg, done, err := o.once(ctx, c, w)
				if msg != last && msg != "" {
					fmt.Fprintln(env.Streams.Out, msg)
					last = msg
				}
				if err != nil || done || !o.watch {
					return err
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("gave up waiting for %s %q: %w", k.Noun, key.Name, ctx.Err())
				case <-time.After(500 * time.Millisecond):
				}
			}
		},
	}
	cmd.Flags().BoolVarP(&o.watch, "watch", "w", true, "watch the rollout until it is done; --watch=false prints its state once")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (0: never)")
	cmd.Flags().Int64Var(&o.revision, "revision", 0, "fail unless the update revision is this one (0: whichever it is)")
	cmd.Flags().BoolVarP(&o.detail, "detail", "d", false, "print the pods not yet done under each progress line")
	return cmd
}

func newPauseCommand(env *Env, pause bool) *cobra.Command {
	use, short, verb := "resume", "Let a paused rollout go on", "resumed"
	if pause {
		use, short, verb = "pause", "Pause the rollout: no pod moves to the update revision until resumed", "paused"
	}
	return &cobra.Command{
		Use:   use + " " + workloadUse,
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, w, err := env.load(cmd.Context(), args)
			if err != nil {
				return err
			}
			patch, err := w.pausePatch(pause)
			if err != nil {
				return err
			}
			if err := c.Patch(cmd.Context(), w.object(), client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
				return err
			}
			fmt.Fprintf(env.Streams.Out, "%s %s\n", ref(w), verb)
			return nil
		},
	}
}
