package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
)

// planOptions are the plan command's flags: the feature gates the forecast plans under.
type planOptions struct {
	steps int
	// partitionRollback is CloneSetPartitionRollback (CloneSets).
	partitionRollback bool
	// startOrdinal is StatefulSetStartOrdinal (Advanced StatefulSets).
	startOrdinal bool
}

// planInPlace are the in-place options of kruise-manager's default feature gates, under which
// the forecast decides what can be updated in place.
var planInPlace = inplace.Options{EnvFromMetadata: true}

// forecast is a workload's rollout forecast as the plan command prints it.
type forecast struct {
	// header is the first line: the workload, its revisions and pods.
	header string
	steps  []forecastStep
}

// forecastStep is one step of a forecast: the pods the planner moves, or, on the last step only,
// none and what the rollout then waits for.
type forecastStep struct {
	actions []forecastAction
	waits   []string
}

// forecastAction is one line of a step: a verb ("in place", "recreate", "create", "delete", ...)
// and what it acts on, with the planner's reason.
type forecastAction struct{ verb, what string }

func newPlanCommand(env *Env) *cobra.Command {
	var o planOptions
	cmd := &cobra.Command{
		Use:   "plan " + workloadUse,
		Short: "Show which pods the rollout's next steps update, and why, from the controller's own planner",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, w, err := env.load(cmd.Context(), args)
			if err != nil {
				return err
			}
			f, err := w.forecast(cmd.Context(), c, time.Now(), o)
			if err != nil {
				return err
			}
			printForecast(env.Streams.Out, f)
			return nil
		},
	}
	cmd.Flags().IntVar(&o.steps, "steps", 20, "how many steps to show at most")
	cmd.Flags().BoolVar(&o.partitionRollback, "partition-rollback", false, "plan a CloneSet as a manager with the CloneSetPartitionRollback gate does")
	cmd.Flags().BoolVar(&o.startOrdinal, "start-ordinal", false, "plan an Advanced StatefulSet as a manager with the StatefulSetStartOrdinal gate does")
	return cmd
}

// resumeAndMoveActions are the lines of a plan's resumed in-place updates and lifecycle moves.
func resumeAndMoveActions(resumes []string, moves []lifecycle.Move) (resumed, moved []forecastAction) {
	for _, name := range resumes {
		resumed = append(resumed, forecastAction{"resume", name + ": its in-place update's grace period is over"})
	}
	for _, m := range moves {
		moved = append(moved, forecastAction{"state", fmt.Sprintf("%s → %s: %s", m.Pod, m.To, m.Reason)})
	}
	return resumed, moved
}

func printForecast(out io.Writer, f *forecast) {
	fmt.Fprintln(out, f.header)
	if len(f.steps) == 0 {
		fmt.Fprintln(out, "nothing to do: every pod is where the spec wants it")
	}
	for i, st := range f.steps {
		if len(st.actions) == 0 {
			msg := "done"
			if len(st.waits) > 0 {
				msg = "waiting: " + strings.Join(st.waits, "; ")
			}
			fmt.Fprintf(out, "then: %s\n", msg)
			continue
		}
		fmt.Fprintf(out, "step %d:\n", i+1)
		for _, a := range st.actions {
			fmt.Fprintf(out, "  %-8s %s\n", a.verb, a.what)
		}
	}
}
