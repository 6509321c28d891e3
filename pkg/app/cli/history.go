package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
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
	output := newOutputFlags("")
	cmd := &cobra.Command{
		Use:   "history " + workloadUse + " [--revision=N] [-o yaml|json|name|jsonpath=...|go-template=...]",
		Short: "List the workload's revisions and their images; with --revision=N, show that revision's pod template",
		Long: "List the workload's revisions: number, name, whether it is the current or the update revision, images. " +
			"With --revision=N, describe that revision's pod template.\n\n" +
			"-o (or --template) prints objects instead: without --revision the workload's ControllerRevisions; with " +
			"--revision, -o yaml and json print the revision's pod template, jsonpath and go-template read that template, " +
			"and -o name names the ControllerRevision. --show-managed-fields keeps the revisions' managedFields.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if number < 0 {
				return fmt.Errorf("--revision must be a positive number, got %d", number)
			}
			printer, err := output.printer()
			if err != nil {
				return err
			}
			_, w, revs, err := env.loadHistory(cmd.Context(), args)
			if err != nil {
				return err
			}
			out := env.Streams.Out
			if number == 0 {
				if printer == nil && env.named != nil { // -f: the files may name several
					fmt.Fprintf(out, "%s\n", ref(w))
				}
				if printer == nil {
					return writeHistory(out, w, revs)
				}
				for _, r := range revs {
					if err := printer.PrintObj(r, out); err != nil {
						return err
					}
				}
				return nil
			}
			r, err := revisionNumbered(revs, number)
			if err != nil {
				return err
			}
			if printer == nil {
				fmt.Fprintf(out, "%s with revision #%d (%s)\n", ref(w), r.Revision, r.Name)
			}
			return printRevision(out, r, *output.OutputFormat, printer)
		},
	}
	cmd.Flags().Int64Var(&number, "revision", 0, "show the pod template of this revision (0: list every revision)")
	output.AddFlags(cmd)
	return cmd
}

// printRevision writes r's pod template: described (no printer), as yaml, json or kyaml, read by
// a jsonpath or go-template printer; -o name names r itself.
func printRevision(out io.Writer, r *appsv1.ControllerRevision, format string, printer printers.ResourcePrinter) error {
	tpl, err := revision.TemplateOf(r)
	if err != nil {
		return err
	}
	switch {
	case printer == nil:
		return describeTemplate(out, tpl)
	case format == "yaml" || format == "json":
		return printTemplate(out, tpl, format)
	case format == "name":
		return printer.PrintObj(r, out)
	case format == "kyaml":
		data, err := json.Marshal(tpl)
		if err != nil {
			return err
		}
		return printer.PrintObj(&runtime.Unknown{Raw: data}, out)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tpl)
	if err != nil {
		return err
	}
	return printer.PrintObj(&unstructured.Unstructured{Object: u}, out)
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
