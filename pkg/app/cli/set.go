package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

func newSetCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{Use: "set", Short: "Set fields of a CloneSet's, an Advanced StatefulSet's or an Advanced DaemonSet's pod template, or a SidecarSet's images"}
	cmd.AddCommand(newSetImageCommand(env), newSetEnvCommand(env), newSetResourcesCommand(env), newSetServiceAccountCommand(env),
		newSetSelectorCommand(env))
	return cmd
}

// setOptions are the flags every set command shares.
type setOptions struct {
	dryRun string
	selection
	output *outputFlags
	record bool
}

// addFlags adds the shared flags; operation is what -o name's absence prints, "image updated".
func (o *setOptions) addFlags(cmd *cobra.Command, operation string) {
	addDryRunFlag(cmd, &o.dryRun, "say what would change, send nothing")
	o.selection.addFlags(cmd)
	o.output = newOutputFlags(operation)
	o.output.AddFlags(cmd)
	cmd.Flags().BoolVar(&o.record, "record", false, "accepted and ignored, as kubectl's deprecated --record: nothing is recorded "+
		"(the workload's ControllerRevisions keep its history)")
}

// mode is the --dry-run strategy, checked against --local, which sends nothing anyway.
func (o *setOptions) mode() (dryRun, error) {
	mode, err := parseDryRun(o.dryRun)
	if err == nil && o.local && mode == dryRunServer {
		return "", errors.New("--local contacts no server: --dry-run=server cannot be with it (--dry-run=client can)")
	}
	return mode, err
}

// splitChanges splits a set command's arguments into the workload (TYPE/NAME or TYPE NAME) and the
// changes after it (the first argument isChange accepts and all that follow), as kubectl reads
// them: a change before the workload's name, or another argument among the changes, is an error.
func splitChanges(args []string, isChange func(string) bool, form string) (target, changes []string, err error) {
	i := slices.IndexFunc(args, isChange)
	if i < 0 {
		return args, nil, nil
	}
	target, changes = args[:i], args[i:]
	if j := slices.IndexFunc(changes, func(a string) bool { return !isChange(a) }); j >= 0 {
		return nil, nil, fmt.Errorf("%q is not %s: name the workload first, then the changes", changes[j], form)
	}
	return target, changes, nil
}

// setTemplate reads the workloads target and o's selection name, lets change edit each one's pod
// template and, when the template changed, patches the difference as o's --dry-run says (nothing
// is sent with --local). It reports "REF WHAT" and how the workload's controller rolls the change
// out (rolloutNote), or prints the objects as -o asks. A workload that fails does not stop the
// others; the errors, and the refused objects of the files, are returned together.
func (e *Env) setTemplate(ctx context.Context, target []string, o setOptions, what string, change func(workload) error) error {
	mode, err := o.mode()
	if err != nil {
		return err
	}
	printer, err := o.output.printer()
	if err != nil {
		return err
	}
	p, err := e.pick(ctx, target, o.selection)
	if err != nil {
		return err
	}
	errs := p.refused
	for _, w := range p.ws {
		if err := e.setOne(ctx, p.c, w, mode, printer, what, change); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// setOne changes w's template and sends the difference as mode says (nothing without a client:
// --local), then reports it or prints w with printer.
func (e *Env) setOne(ctx context.Context, c client.Client, w workload, mode dryRun, printer printers.ResourcePrinter, what string,
	change func(workload) error) error {
	before := w.object().DeepCopyObject().(client.Object)
	old := w.template().DeepCopy()
	if err := change(w); err != nil {
		return fmt.Errorf("%s: %w", ref(w), err)
	}
	out := e.Streams.Out
	unchanged := apiequality.Semantic.DeepEqual(old, w.template())
	suffix := " (local)"
	if c != nil && !unchanged {
		var err error
		if suffix, err = patchAs(ctx, c, w.object(), before, mode); err != nil {
			return fmt.Errorf("%s: %w", ref(w), err)
		}
	}
	switch {
	case printer != nil:
		return printer.PrintObj(w.object(), out)
	case unchanged:
		fmt.Fprintf(out, "%s unchanged: the pod template is so already\n", ref(w))
		return nil
	}
	fmt.Fprintf(out, "%s %s%s\n", ref(w), what, suffix)
	fmt.Fprintln(out, rolloutNote(old, w.template()))
	return nil
}

// patchAs patches obj's difference from before as mode says: not at all (client), checked by the
// API server and its webhooks but not kept (server), or for good; suffix names the dry run.
func patchAs(ctx context.Context, c client.Client, obj, before client.Object, mode dryRun) (suffix string, err error) {
	switch mode {
	case dryRunClient:
		return " (dry run)", nil
	case dryRunServer:
		return " (server dry run)", c.Patch(ctx, obj, client.MergeFrom(before), client.DryRunAll)
	}
	return "", c.Patch(ctx, obj, client.MergeFrom(before))
}

// rolloutNote says how a workload's controller brings its pods from template old to updated, as
// the in-place planner decides it: in place (where the update strategy updates in place), in
// place only where pods can be resized, or by new pods, with the fields that rule in place out.
func rolloutNote(old, updated *corev1.PodTemplateSpec) string {
	d := inplace.Plan(old, updated, "", inplace.Options{})
	switch {
	case d.InPlace():
		return "the pods are updated in place where the update strategy updates in place (InPlaceIfPossible, InPlaceOnly)"
	case inplace.Plan(old, updated, "", inplace.Options{VerticalScaling: true}).InPlace():
		return "the pods are resized in place where the update strategy updates in place, the API server serves pods/resize and " +
			"Kruise's InPlaceWorkloadVerticalScaling gate is on; otherwise they are recreated by the update strategy"
	}
	return fmt.Sprintf("no pod reaches this template in place (%s): the controller recreates the pods by its update strategy",
		strings.Join(d.RecreateReasons, "; "))
}

func newSetServiceAccountCommand(env *Env) *cobra.Command {
	var o setOptions
	cmd := &cobra.Command{
		Use:     "serviceaccount (" + workloadUse + " | TYPE --all | TYPE -l SELECTOR | -f FILE) SERVICE_ACCOUNT",
		Aliases: []string{"sa"},
		Short:   "Set the service account of a workload's pod template (the controller recreates the pods)",
		Long:    "Set the service account of the pod template of a workload, of workloads selected (--all, -l) or named by files (-f, -k).\n\n" + selectionHelp,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sa := args[len(args)-1]
			return env.setTemplate(cmd.Context(), args[:len(args)-1], o, "serviceaccount updated", func(w workload) error {
				w.template().Spec.ServiceAccountName = sa
				return nil
			})
		},
	}
	o.addFlags(cmd, "serviceaccount updated")
	return cmd
}

// selectionHelp says how the set commands name their workloads and print them.
const selectionHelp = "The workload is TYPE/NAME or TYPE NAME (several: TYPE/NAME TYPE/NAME ..., TYPE NAME NAME ...); --all takes every workload of the TYPE in the namespace, -l those " +
	"whose labels match (TYPE may list kinds, comma separated: clone,asts); -f, -k and -R take the workloads manifest files " +
	"name (objects of other kinds are refused, each named, the others changed), read from the server, or with --local as the " +
	"files have them, changed and printed, no server contacted. -o prints the changed objects (yaml, json, name, " +
	"jsonpath=..., go-template=...) instead of saying what changed. --record is accepted and ignored, as kubectl's deprecated " +
	"flag is."

// newSetSelectorCommand is kruise-tools' set selector, which sets a Service's selector only: the
// selector of every kind kubectl-kruise drives is immutable, so it refuses, saying what to do.
func newSetSelectorCommand(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "selector TYPE/NAME EXPRESSIONS",
		Short: "Refused: a CloneSet's, Advanced StatefulSet's or Advanced DaemonSet's selector is immutable (kubectl set selector sets a Service's)",
		Args:  cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name, _ := splitKindName(args[:len(args)-1])
			mapper := env.restMapper()
			if serviceKind.namedBy(mapper, kind) {
				return fmt.Errorf("a Service's selector is kubectl's to set: kubectl set selector service/%s %s", name, args[len(args)-1])
			}
			k, name, err := env.parseWorkload(args[:len(args)-1])
			if err != nil {
				return err
			}
			return fmt.Errorf("the selector of %s %q is immutable (Kruise's webhook refuses a change, as OpenKruise's does): create a "+
				"new %s with the selector and pod labels you want, then delete this one", k.Noun, name, k.Noun)
		},
	}
}
