package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kruise-ng/kruise/pkg/controller/cloneset"
	"github.com/kruise-ng/kruise/pkg/inplace"
	"github.com/kruise-ng/kruise/pkg/inplace/engine"
)

func newPlanCommand(env *Env) *cobra.Command {
	var steps int
	var rollback bool
	cmd := &cobra.Command{
		Use:   "plan clone/NAME",
		Short: "Show which pods the rollout's next steps update, and why, from the controller's own planner",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, cs, err := getCloneSet(cmd, env, args)
			if err != nil {
				return err
			}
			r := &cloneset.Reconciler{Client: c, Engine: engine.New(c, nil, inplace.Options{}), PartitionRollback: rollback}
			snap, err := r.Snapshot(cmd.Context(), cs)
			if err != nil {
				return err
			}
			out := env.Streams.Out
			fmt.Fprintf(out, "cloneset %q: update revision %s, current revision %s, %d pods\n", cs.Name, snap.UpdateRevision,
				snap.CurrentRevision, len(snap.Pods))
			forecast := cloneset.Forecast(snap, time.Now(), cloneset.Options{PartitionRollback: rollback}, steps)
			if len(forecast) == 0 {
				fmt.Fprintln(out, "nothing to do: every pod is where the spec wants it")
			}
			for i, st := range forecast {
				if len(st.Updates)+len(st.Creates)+len(st.Deletes) == 0 {
					msg := "done"
					if len(st.Waits) > 0 {
						msg = "waiting: " + strings.Join(st.Waits, "; ")
					}
					fmt.Fprintf(out, "then: %s\n", msg)
					continue
				}
				fmt.Fprintf(out, "step %d:\n", i+1)
				for _, u := range st.Updates {
					how := "in place"
					if u.Mode == cloneset.UpdateRecreate {
						how = "recreate"
					}
					fmt.Fprintf(out, "  %-8s %s (%s → %s): %s\n", how, u.Pod, u.From, u.To, u.Reason)
				}
				for _, cr := range st.Creates {
					fmt.Fprintf(out, "  %-8s a pod at %s: %s\n", "create", cr.Revision, cr.Reason)
				}
				for _, d := range st.Deletes {
					fmt.Fprintf(out, "  %-8s %s: %s\n", "delete", d.Pod, d.Reason)
				}
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&steps, "steps", 20, "how many steps to show at most")
	cmd.Flags().BoolVar(&rollback, "partition-rollback", false, "plan as a manager with the CloneSetPartitionRollback gate does")
	return cmd
}
