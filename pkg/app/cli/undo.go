package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/core/revision"
)

func newUndoCommand(env *Env) *cobra.Command {
	var to int64
	var dryRunFlag string
	output := newOutputFlags("rolled back")
	cmd := &cobra.Command{
		Use:   "undo " + workloadUse + " [--to-revision=N] [--dry-run=none|client|server] [-o yaml|json|name|...]",
		Short: "Roll the workload back to the previous revision (or --to-revision): in place where possible",
		Long: "Roll the workload back: its pod template becomes that of the revision before the update revision, or of " +
			"--to-revision. --dry-run=client prints that template and changes nothing; --dry-run=server has the API server " +
			"(and Kruise's webhooks) check the change without keeping it. -o prints the workload as the undo writes it " +
			"(with --dry-run=client, as it would write it, unsent) instead of saying what changed.",
		RunE: func(cmd *cobra.Command, args []string) error {
			mode, err := parseDryRun(dryRunFlag)
			if err != nil {
				return err
			}
			printer, err := output.printer()
			if err != nil {
				return err
			}
			return env.undo(cmd.Context(), args, to, mode, printer)
		},
	}
	output.AddFlags(cmd)
	cmd.Flags().Int64Var(&to, "to-revision", 0, "the revision to roll back to (0: the one before the update revision)")
	addDryRunFlag(cmd, &dryRunFlag, "print the template it would roll back to, send nothing")
	return cmd
}

// undo rolls the workload the arguments name back to revision to (0: the one before the update
// revision), as mode says; a template that is already the revision's is left alone. With a
// printer, the workload is printed as the undo leaves it (or, client dry run, would).
func (e *Env) undo(ctx context.Context, args []string, to int64, mode dryRun, printer printers.ResourcePrinter) error {
	c, w, revs, err := e.loadHistory(ctx, args)
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
	out := e.Streams.Out
	switch {
	case apiequality.Semantic.DeepEqual(w.template(), tpl) && printer != nil:
		return printer.PrintObj(w.object(), out)
	case apiequality.Semantic.DeepEqual(w.template(), tpl):
		fmt.Fprintf(out, "%s skipped rollback (the pod template is revision %d's already)\n", ref(w), target.Revision)
		return nil
	case mode == dryRunClient && printer != nil:
		*w.template() = *tpl
		return printer.PrintObj(w.object(), out)
	case mode == dryRunClient:
		fmt.Fprintf(out, "%s would roll back to revision %d (%s) (dry run)\n", ref(w), target.Revision, target.Name)
		return describeTemplate(out, tpl)
	}
	before := w.object().DeepCopyObject().(client.Object)
	*w.template() = *tpl
	var opts []client.PatchOption
	suffix := ""
	if mode == dryRunServer {
		opts, suffix = append(opts, client.DryRunAll), " (server dry run)"
	}
	if err := c.Patch(ctx, w.object(), client.MergeFrom(before), opts...); err != nil {
		return err
	}
	if printer != nil {
		return printer.PrintObj(w.object(), out)
	}
	fmt.Fprintf(out, "%s rolled back to revision %d (%s)%s\n", ref(w), target.Revision, target.Name, suffix)
	return nil
}

// undoTarget picks the revision to roll back to: number to, or the newest one before current.
func undoTarget(revs []*appsv1.ControllerRevision, current string, to int64) (*appsv1.ControllerRevision, error) {
	if to > 0 {
		return revisionNumbered(revs, to)
	}
	for i := len(revs) - 1; i >= 0; i-- {
		if revs[i].Name != current {
			return revs[i], nil
		}
	}
	return nil, errors.New("no previous revision to roll back to")
}
