package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/core/revision"
)

func newRolloutCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{Use: "rollout", Short: "Manage the rollout of a CloneSet, an Advanced StatefulSet or an Advanced DaemonSet"}
	cmd.AddCommand(newStatusCommand(env), newPauseCommand(env, true), newPauseCommand(env, false),
		newHistoryCommand(env), newUndoCommand(env), newRestartCommand(env), newPlanCommand(env))
	return cmd
}

// ErrStuck is returned when a rollout has exceeded its progress deadline.
var ErrStuck = errors.New("rollout exceeded its progress deadline")

func newStatusCommand(env *Env) *cobra.Command {
	var watch bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status " + workloadUse,
		Short: "Show the rollout's progress until it is done (exit 2 when it is stuck)",
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
				msg, done, err := w.status()
				if msg != last {
					fmt.Fprintln(env.Streams.Out, msg)
					last = msg
				}
				if err != nil || done || !watch {
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
	cmd.Flags().BoolVarP(&watch, "watch", "w", true, "watch the rollout until it is done; --watch=false prints its state once")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (0: never)")
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

// loadHistory reads the workload the arguments name and its revisions, oldest first.
func (e *Env) loadHistory(ctx context.Context, args []string) (client.Client, workload, []*appsv1.ControllerRevision, error) {
	c, w, err := e.load(ctx, args)
	if err != nil {
		return nil, nil, nil, err
	}
	revs, err := history(ctx, c, w.object())
	return c, w, revs, err
}

func newHistoryCommand(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "history " + workloadUse,
		Short: "List the workload's revisions and their images",
		RunE: func(cmd *cobra.Command, args []string) error {
			_, w, revs, err := env.loadHistory(cmd.Context(), args)
			if err != nil {
				return err
			}
			current, update := w.revisions()
			tw := tabwriter.NewWriter(env.Streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "REVISION\tNAME\tSTATE\tIMAGES")
			for _, r := range revs {
				var states []string
				if r.Name == current {
					states = append(states, "current")
				}
				if r.Name == update {
					states = append(states, "update")
				}
				state := strings.Join(states, ",")
				images := "?"
				if tpl, err := revision.TemplateOf(r); err == nil {
					var parts []string
					for _, ct := range tpl.Spec.Containers {
						parts = append(parts, ct.Name+"="+ct.Image)
					}
					images = strings.Join(parts, ",")
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", r.Revision, r.Name, state, images)
			}
			return tw.Flush()
		},
	}
}

func newUndoCommand(env *Env) *cobra.Command {
	var to int64
	cmd := &cobra.Command{
		Use:   "undo " + workloadUse + " [--to-revision=N]",
		Short: "Roll the workload back to the previous revision (or --to-revision): in place where possible",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, w, revs, err := env.loadHistory(cmd.Context(), args)
			if err != nil {
				return err
			}
			_, update := w.revisions()
			target, err := undoTarget(revs, update, to)
			if err != nil {
				return err
			}
			tpl, err := revision.TemplateOf(target)
			if err != nil {
				return err
			}
			before := w.object().DeepCopyObject().(client.Object)
			*w.template() = *tpl
			if err := c.Patch(cmd.Context(), w.object(), client.MergeFrom(before)); err != nil {
				return err
			}
			fmt.Fprintf(env.Streams.Out, "%s rolled back to revision %d (%s)\n", ref(w), target.Revision, target.Name)
			return nil
		},
	}
	cmd.Flags().Int64Var(&to, "to-revision", 0, "the revision to roll back to (0: the one before the update revision)")
	return cmd
}

// undoTarget picks the revision to roll back to: number to, or the newest one before current.
func undoTarget(revs []*appsv1.ControllerRevision, current string, to int64) (*appsv1.ControllerRevision, error) {
	if to > 0 {
		for _, r := range revs {
			if r.Revision == to {
				return r, nil
			}
		}
		return nil, fmt.Errorf("no revision %d (see kubectl kruise rollout history)", to)
	}
	for i := len(revs) - 1; i >= 0; i-- {
		if revs[i].Name != current {
			return revs[i], nil
		}
	}
	return nil, errors.New("no previous revision to roll back to")
}
