package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/core/revision"
)

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
	var number int64
	var output string
	cmd := &cobra.Command{
		Use:   "history " + workloadUse + " [--revision=N [-o yaml|json]]",
		Short: "List the workload's revisions and their images; with --revision=N, show that revision's pod template",
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case number < 0:
				return fmt.Errorf("--revision must be a positive number, got %d", number)
			case number == 0 && output != "":
				return errors.New("--output prints one revision's pod template: give --revision=N")
			}
			_, w, revs, err := env.loadHistory(cmd.Context(), args)
			if err != nil {
				return err
			}
			if number == 0 {
				return writeHistory(env.Streams.Out, w, revs)
			}
			r, err := revisionNumbered(revs, number)
			if err != nil {
				return err
			}
			tpl, err := revision.TemplateOf(r)
			if err != nil {
				return err
			}
			if output == "" {
				fmt.Fprintf(env.Streams.Out, "%s with revision #%d (%s)\n", ref(w), r.Revision, r.Name)
			}
			return printTemplate(env.Streams.Out, tpl, output)
		},
	}
	cmd.Flags().Int64Var(&number, "revision", 0, "show the pod template of this revision (0: list every revision)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "with --revision: print the pod template as yaml or json instead of describing it")
	return cmd
}

// writeHistory lists revs, one a line: number, name, whether it is the current or the update
// revision, and its images.
func writeHistory(out io.Writer, w workload, revs []*appsv1.ControllerRevision) error {
	current, update := w.revisions()
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tNAME\tSTATE\tIMAGES")
	for _, r := range revs {
		var states []string
		if r.Name == current {
			states = append(states, "current")
		}
		if r.Name == update {
			states = append(states, "update")
		}
		images := "?"
		if tpl, err := revision.TemplateOf(r); err == nil {
			var parts []string
			for _, ct := range tpl.Spec.Containers {
				parts = append(parts, ct.Name+"="+ct.Image)
			}
			images = strings.Join(parts, ",")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", r.Revision, r.Name, strings.Join(states, ","), images)
	}
	return tw.Flush()
}

// revisionNumbered is the revision of revs numbered n.
func revisionNumbered(revs []*appsv1.ControllerRevision, n int64) (*appsv1.ControllerRevision, error) {
	for _, r := range revs {
		if r.Revision == n {
			return r, nil
		}
	}
	return nil, fmt.Errorf("no revision %d (see kubectl kruise rollout history)", n)
}

// dryRun is kubectl's --dry-run strategy.
type dryRun string

// The --dry-run strategies: none changes the workload; client prints what would change and sends
// nothing; server sends the change for the API server (and its webhooks) to check, not to keep.
const (
	dryRunNone   dryRun = "none"
	dryRunClient dryRun = "client"
	dryRunServer dryRun = "server"
)

// parseDryRun reads --dry-run as kubectl does: none, client or server; a bare --dry-run and the
// old true are client, false is none.
func parseDryRun(v string) (dryRun, error) {
	switch v {
	case "none", "client", "server":
		return dryRun(v), nil
	}
	if b, err := strconv.ParseBool(v); err == nil {
		if b {
			return dryRunClient, nil
		}
		return dryRunNone, nil
	}
	return "", fmt.Errorf(`--dry-run %q: must be "none", "client" or "server"`, v)
}

// addDryRunFlag adds kubectl's --dry-run to cmd, read into p (a bare --dry-run is client);
// client says what the client strategy does.
func addDryRunFlag(cmd *cobra.Command, p *string, client string) {
	cmd.Flags().StringVar(p, "dry-run", string(dryRunNone),
		`"none", "client" (`+client+`) or "server" (the API server and Kruise's webhooks check it, keep nothing)`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = string(dryRunClient)
}

func newUndoCommand(env *Env) *cobra.Command {
	var to int64
	var dryRunFlag string
	cmd := &cobra.Command{
		Use:   "undo " + workloadUse + " [--to-revision=N] [--dry-run=none|client|server]",
		Short: "Roll the workload back to the previous revision (or --to-revision): in place where possible",
		Long: "Roll the workload back: its pod template becomes that of the revision before the update revision, or of " +
			"--to-revision. --dry-run=client prints that template and changes nothing; --dry-run=server has the API server " +
			"(and Kruise's webhooks) check the change without keeping it.",
		RunE: func(cmd *cobra.Command, args []string) error {
			mode, err := parseDryRun(dryRunFlag)
			if err != nil {
				return err
			}
			return env.undo(cmd.Context(), args, to, mode)
		},
	}
	cmd.Flags().Int64Var(&to, "to-revision", 0, "the revision to roll back to (0: the one before the update revision)")
	addDryRunFlag(cmd, &dryRunFlag, "print the template it would roll back to, send nothing")
	return cmd
}

// undo rolls the workload the arguments name back to revision to (0: the one before the update
// revision), as mode says; a template that is already the revision's is left alone.
func (e *Env) undo(ctx context.Context, args []string, to int64, mode dryRun) error {
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
	if apiequality.Semantic.DeepEqual(w.template(), tpl) {
		fmt.Fprintf(out, "%s skipped rollback (the pod template is revision %d's already)\n", ref(w), target.Revision)
		return nil
	}
	if mode == dryRunClient {
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
