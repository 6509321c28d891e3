package cli

import (
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
)

// outputFlags are kubectl's printing flags: -o (yaml, json, name, jsonpath=..., go-template=...,
// and the file forms), --template, --show-managed-fields and --allow-missing-template-keys.
type outputFlags struct {
	*genericclioptions.PrintFlags
	// made is the printer once made: one printer for every object a command prints, so that
	// yaml separates them as one stream (---) even when the command runs once per workload.
	made printers.ResourcePrinter
}

// newOutputFlags are the printing flags; operation is what -o's absence would print after a name,
// which the commands print their own way instead.
func newOutputFlags(operation string) *outputFlags {
	return &outputFlags{PrintFlags: genericclioptions.NewPrintFlags(operation)}
}

// requested reports whether -o or --template asks for the objects to be printed.
func (o *outputFlags) requested() bool {
	t := o.TemplatePrinterFlags.TemplateArgument
	return *o.OutputFormat != "" || (t != nil && *t != "")
}

// printer prints objects as the flags ask, their apiVersion and kind filled in from the scheme
// when the client left them out; nil when the flags ask for nothing.
func (o *outputFlags) printer() (printers.ResourcePrinter, error) {
	if !o.requested() || o.made != nil {
		return o.made, nil
	}
	p, err := o.ToPrinter()
	if err != nil {
		return nil, err
	}
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	o.made = typedPrinter{p, scheme}
	return o.made, nil
}

// typedPrinter sets the apiVersion and kind of the typed objects it prints (a copy of them), as
// the printers want them.
type typedPrinter struct {
	printers.ResourcePrinter
	scheme *runtime.Scheme
}

func (p typedPrinter) PrintObj(obj runtime.Object, out io.Writer) error {
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		if gvks, _, err := p.scheme.ObjectKinds(obj); err == nil {
			obj = obj.DeepCopyObject()
			obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		}
	}
	return p.ResourcePrinter.PrintObj(obj, out)
}
