package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/controller/cloneset"
	"github.com/kruise-ng/kruise/pkg/revision"
)

func newRolloutCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{Use: "rollout", Short: "Manage the rollout of a CloneSet"}
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
		Use:   "status clone/NAME",
		Short: "Show the rollout's progress until it is done (exit 2 when it is stuck)",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, key, err := env.workload(args)
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
				cs := &appsv1alpha1.CloneSet{}
				if err := c.Get(ctx, key, cs); err != nil {
					return err
				}
				msg, done, err := Status(cs)
				if msg != last {
					fmt.Fprintln(env.Streams.Out, msg)
					last = msg
				}
				if err != nil || done || !watch {
					return err
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("gave up waiting for cloneset %q: %w", key.Name, ctx.Err())
				case <-time.After(500 * time.Millisecond):
				}
			}
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", true, "watch the rollout until it is done; --watch=false prints its state once")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (0: never)")
	return cmd
}

// Status describes cs's rollout in one line; done when every pod is updated and available (or the
// partition holds the rest); ErrStuck when its progress deadline passed.
func Status(cs *appsv1alpha1.CloneSet) (string, bool, error) {
	name := cs.Name
	if cs.Status.ObservedGeneration < cs.Generation {
		return fmt.Sprintf("Waiting for cloneset %q spec update to be observed...", name), false, nil
	}
	for _, c := range cs.Status.Conditions {
		if c.Type == appsv1alpha1.CloneSetConditionProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return fmt.Sprintf("cloneset %q rollout is stuck: %s", name, c.Message), false, ErrStuck
		}
	}
	b := cloneset.ComputeBounds(&cs.Spec) // the controller's own reading of replicas and partition
	want, partition, target := int32(b.Replicas), int32(b.Partition), int32(b.ExpectedUpdated)
	st := cs.Status
	paused := ""
	if cs.Spec.UpdateStrategy.Paused {
		paused = " (paused)"
	}
	switch {
	case st.UpdatedReplicas < target:
		return fmt.Sprintf("Waiting for cloneset %q rollout to finish: %d of %d pods updated, %d ready, %d available%s...",
			name, st.UpdatedReplicas, target, st.UpdatedReadyReplicas, st.AvailableReplicas, paused), false, nil
	case st.Replicas > want:
		return fmt.Sprintf("Waiting for cloneset %q rollout to finish: %d old pods are pending termination...", name, st.Replicas-want), false, nil
	case st.UpdatedReadyReplicas < target || st.AvailableReplicas < want:
		return fmt.Sprintf("Waiting for cloneset %q rollout to finish: %d of %d updated pods ready, %d of %d available...",
			name, st.UpdatedReadyReplicas, target, st.AvailableReplicas, want), false, nil
	case partition > 0:
		return fmt.Sprintf("cloneset %q partitioned rollout done: %d of %d pods updated (partition %d)", name, target, want, partition), true, nil
	}
	return fmt.Sprintf("cloneset %q successfully rolled out", name), true, nil
}

func newPauseCommand(env *Env, pause bool) *cobra.Command {
	use, short := "resume clone/NAME", "Let a paused rollout go on"
	if pause {
		use, short = "pause clone/NAME", "Pause the rollout: no pod moves to the update revision until resumed"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, key, err := env.workload(args)
			if err != nil {
				return err
			}
			cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
			patch := fmt.Sprintf(`{"spec":{"updateStrategy":{"paused":%t}}}`, pause)
			if err := c.Patch(cmd.Context(), cs, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
				return err
			}
			verb := "resumed"
			if pause {
				verb = "paused"
			}
			fmt.Fprintf(env.Streams.Out, "cloneset.apps.kruise.io/%s %s\n", key.Name, verb)
			return nil
		},
	}
}

// history is the CloneSet's revisions, oldest first.
func history(ctx context.Context, c client.Client, cs *appsv1alpha1.CloneSet) ([]*appsv1.ControllerRevision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := c.List(ctx, list, client.InNamespace(cs.Namespace)); err != nil {
		return nil, err
	}
	var out []*appsv1.ControllerRevision
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], cs) {
			out = append(out, &list.Items[i])
		}
	}
	slices.SortFunc(out, func(a, b *appsv1.ControllerRevision) int { return int(a.Revision - b.Revision) })
	return out, nil
}

// cloneSetHistory reads the CloneSet args name and its revisions, oldest first.
func cloneSetHistory(cmd *cobra.Command, env *Env, args []string) (client.Client, *appsv1alpha1.CloneSet, []*appsv1.ControllerRevision, error) {
	c, cs, err := getCloneSet(cmd, env, args)
	if err != nil {
		return nil, nil, nil, err
	}
	revs, err := history(cmd.Context(), c, cs)
	return c, cs, revs, err
}

func getCloneSet(cmd *cobra.Command, env *Env, args []string) (client.Client, *appsv1alpha1.CloneSet, error) {
	c, key, err := env.workload(args)
	if err != nil {
		return nil, nil, err
	}
	cs := &appsv1alpha1.CloneSet{}
	if err := c.Get(cmd.Context(), key, cs); err != nil {
		return nil, nil, err
	}
	return c, cs, nil
}

// workload reads the CloneSet the arguments name and the namespace of the flags, and gives a
// client.
func (e *Env) workload(args []string) (client.Client, client.ObjectKey, error) {
	name, err := ParseWorkload(args)
	if err != nil {
		return nil, client.ObjectKey{}, err
	}
	c, ns, err := e.Client()
	if err != nil {
		return nil, client.ObjectKey{}, err
	}
	return c, client.ObjectKey{Namespace: ns, Name: name}, nil
}

func newHistoryCommand(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "history clone/NAME",
		Short: "List the CloneSet's revisions and their images",
		RunE: func(cmd *cobra.Command, args []string) error {
			_, cs, revs, err := cloneSetHistory(cmd, env, args)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(env.Streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "REVISION\tNAME\tSTATE\tIMAGES")
			for _, r := range revs {
				var states []string
				if r.Name == cs.Status.CurrentRevision {
					states = append(states, "current")
				}
				if r.Name == cs.Status.UpdateRevision {
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
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", r.Revision, r.Name, state, images)
			}
			return w.Flush()
		},
	}
}

func newUndoCommand(env *Env) *cobra.Command {
	var to int64
	cmd := &cobra.Command{
		Use:   "undo clone/NAME [--to-revision=N]",
		Short: "Roll the CloneSet back to the previous revision (or --to-revision): in place where possible",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, cs, revs, err := cloneSetHistory(cmd, env, args)
			if err != nil {
				return err
			}
			target, err := undoTarget(revs, cs.Status.UpdateRevision, to)
			if err != nil {
				return err
			}
			tpl, err := revision.TemplateOf(target)
			if err != nil {
				return err
			}
			before := cs.DeepCopy()
			cs.Spec.Template = *tpl
			if err := c.Patch(cmd.Context(), cs, client.MergeFrom(before)); err != nil {
				return err
			}
			fmt.Fprintf(env.Streams.Out, "cloneset.apps.kruise.io/%s rolled back to revision %d (%s)\n", cs.Name, target.Revision, target.Name)
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
