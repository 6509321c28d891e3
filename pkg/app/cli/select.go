package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fileFlags are kubectl's -f, -k and -R: workloads named by manifest files.
type fileFlags struct{ resource.FilenameOptions }

func (f *fileFlags) addFlags(cmd *cobra.Command, what string) {
	fl := cmd.Flags()
	fl.StringSliceVarP(&f.Filenames, "filename", "f", nil, "manifest files, directories or URLs (- for stdin) naming the workloads "+what)
	fl.StringVarP(&f.Kustomize, "kustomize", "k", "", "a kustomization directory whose output names the workloads "+what)
	fl.BoolVarP(&f.Recursive, "recursive", "R", false, "read the directories -f names and those below them")
}

func (f *fileFlags) given() bool { return len(f.Filenames) > 0 || f.Kustomize != "" }

// manifest is one object a manifest file names: its kind, when kubectl-kruise drives it, and
// the object as the file has it.
type manifest struct {
	kind *Kind
	obj  *unstructured.Unstructured
}

// readManifests reads the objects f's files name, as kubectl reads -f, -k and -R, without asking
// the API server: an object without a namespace is in the flags' (or kubeconfig's); a workload in
// another namespace than an explicit -n is an error. The objects of kinds kubectl-kruise does not drive
// are refused, each error naming one; the others are returned.
func (e *Env) readManifests(f fileFlags) (ms []manifest, refused []error, err error) {
	if f.Kustomize != "" && (len(f.Filenames) > 0 || f.Recursive) {
		return nil, nil, errors.New("-k reads a kustomization: give -f (with -R) or -k, not both")
	}
	ns, explicit, err := e.namespaceFlag()
	if err != nil {
		return nil, nil, err
	}
	infos, err := resource.NewLocalBuilder().Unstructured().FilenameParam(false, &f.FilenameOptions).Flatten().Do().Infos()
	if err != nil {
		return nil, nil, err
	}
	if len(infos) == 0 {
		return nil, nil, errors.New("the files name no object")
	}
	for _, info := range infos {
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			return nil, nil, fmt.Errorf("%s: %T is not an object", info.Source, info.Object)
		}
		gvk := u.GroupVersionKind()
		k, err := workloadKind(gvk.Kind, gvk)
		if gvk.GroupKind() == sidecarSetKind.gk {
			err = fmt.Errorf("a SidecarSet is named, not read from a file: kubectl kruise set image sidecarset/%s C=IMAGE", u.GetName())
		}
		if err != nil {
			refused = append(refused, fmt.Errorf("%s %q in %s: %w", gvk.Kind, u.GetName(), info.Source, err))
			continue
		}
		switch {
		case u.GetNamespace() == "":
			u.SetNamespace(ns)
		case explicit && u.GetNamespace() != ns:
			return nil, nil, fmt.Errorf("%s %q in %s is in namespace %q, not %q as -n says", gvk.Kind, u.GetName(), info.Source, u.GetNamespace(), ns)
		}
		ms = append(ms, manifest{kind: k, obj: u})
	}
	return ms, refused, nil
}

// namespaceFlag is the namespace the flags (or the kubeconfig) give, and whether -n gave it.
func (e *Env) namespaceFlag() (string, bool, error) {
	if e.client != nil {
		return e.namespace, false, nil
	}
	return e.Flags.ToRawKubeConfigLoader().Namespace()
}

// local is the workload m's file holds, as it is there: --local changes it without a server.
func (m manifest) local() (workload, error) {
	w := m.kind.new()
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	gvks, _, err := scheme.ObjectKinds(w.object())
	if err != nil {
		return nil, err
	}
	if gv := m.obj.GroupVersionKind().GroupVersion(); gv != gvks[0].GroupVersion() {
		return nil, fmt.Errorf("%s %q is %s: --local reads %s %ss only (kubectl kruise sets the others on the server)",
			m.obj.GetKind(), m.obj.GetName(), gv, gvks[0].GroupVersion(), gvks[0].Kind)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.obj.Object, w.object()); err != nil {
		return nil, fmt.Errorf("%s %q: %w", m.obj.GetKind(), m.obj.GetName(), err)
	}
	return w, nil
}

// selection names a set command's workloads: by the arguments (TYPE/NAME or TYPE NAME), every
// one of the TYPEs the argument names (--all, -l), or by manifest files (-f, -k, -R), whose
// workloads --local changes as the files have them.
type selection struct {
	files    fileFlags
	all      bool
	selector string
	local    bool
}

func (s *selection) addFlags(cmd *cobra.Command) {
	s.files.addFlags(cmd, "to change")
	cmd.Flags().BoolVar(&s.all, "all", false, "every workload of the TYPE (clone, asts, ads; comma separated) in the namespace")
	cmd.Flags().StringVarP(&s.selector, "selector", "l", "", "the workloads of the TYPE whose labels the selector matches (e.g. app=web,tier!=db)")
	cmd.Flags().BoolVar(&s.local, "local", false, "with -f or -k: change the objects as the files have them and print them; contact no server")
}

// picked are the workloads a selection names, the client they were read with (nil with --local),
// and the objects of the files refused for their kind.
type picked struct {
	c       client.Client
	ws      []workload
	refused []error
}

// pick reads the workloads s and target (the arguments before the changes) name.
func (e *Env) pick(ctx context.Context, target []string, s selection) (picked, error) {
	switch {
	case s.local && !s.files.given():
		return picked{}, errors.New("--local changes the objects -f or -k read: name the files")
	case s.all && s.selector != "":
		return picked{}, errors.New("--all selects every workload of the TYPE, -l those it matches: give one of them")
	case s.files.given() && (len(target) > 0 || s.all || s.selector != ""):
		return picked{}, errors.New("-f and -k name the workloads: give no TYPE/NAME, --all or -l with them")
	case s.files.given():
		return e.pickFiles(ctx, s)
	case s.all || s.selector != "":
		return e.pickSelected(ctx, target, s)
	}
	var p picked
	for _, args := range splitNames(target) {
		c, w, err := e.load(ctx, args)
		if err != nil {
			return picked{}, err
		}
		p.c, p.ws = c, append(p.ws, w)
	}
	return p, nil
}

// splitNames splits the arguments naming workloads, as kubectl reads them: TYPE/NAME ... (each
// its own), or TYPE NAME NAME ... (each NAME of the TYPE); anything else is left as one, for
// parseWorkload to read or refuse.
func splitNames(args []string) [][]string {
	var out [][]string
	switch {
	case len(args) > 1 && !slices.ContainsFunc(args, func(a string) bool { return !strings.Contains(a, "/") }):
		for _, a := range args {
			out = append(out, []string{a})
		}
	case len(args) > 2 && !slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "/") }):
		for _, name := range args[1:] {
			out = append(out, []string{args[0], name})
		}
	default:
		out = append(out, args)
	}
	return out
}

// pickFiles reads the workloads the files name: from the API server, or as the files have them
// (--local).
func (e *Env) pickFiles(ctx context.Context, s selection) (picked, error) {
	ms, refused, err := e.readManifests(s.files)
	if err != nil {
		return picked{}, err
	}
	p := picked{refused: refused}
	if !s.local {
		if p.c, _, err = e.Client(); err != nil {
			return picked{}, err
		}
	}
	for _, m := range ms {
		var w workload
		if s.local {
			w, err = m.local()
		} else {
			w, err = getWorkload(ctx, p.c, m.kind, client.ObjectKeyFromObject(m.obj))
		}
		if err != nil {
			p.refused = append(p.refused, err)
			continue
		}
		p.ws = append(p.ws, w)
	}
	return p, nil
}

// pickSelected lists the workloads of the TYPEs target names (one argument, comma separated) in
// the namespace, those -l matches or (--all) every one.
func (e *Env) pickSelected(ctx context.Context, target []string, s selection) (picked, error) {
	flag := "--all"
	if s.selector != "" {
		flag = "-l " + s.selector
	}
	if len(target) != 1 || strings.Contains(target[0], "/") {
		return picked{}, fmt.Errorf("%s selects workloads by TYPE: name the TYPE alone (clone, asts, ads, or several comma separated), got %q",
			flag, strings.Join(target, " "))
	}
	sel, err := labels.Parse(s.selector)
	if err != nil {
		return picked{}, fmt.Errorf("-l %q: %w", s.selector, err)
	}
	c, ns, err := e.Client()
	if err != nil {
		return picked{}, err
	}
	p := picked{c: c}
	for _, typ := range strings.Split(target[0], ",") {
		k, err := resolveKind(e.restMapper(), typ)
		if err != nil {
			return picked{}, err
		}
		ws, err := listWorkloads(ctx, c, k, ns, sel)
		if err != nil {
			return picked{}, err
		}
		p.ws = append(p.ws, ws...)
	}
	if len(p.ws) == 0 {
		return picked{}, fmt.Errorf("no %s in namespace %q matches %s", target[0], ns, flag)
	}
	return p, nil
}

// listWorkloads lists the workloads of kind k in namespace ns whose labels sel matches.
func listWorkloads(ctx context.Context, c client.Client, k *Kind, ns string, sel labels.Selector) ([]workload, error) {
	gvk, err := c.GroupVersionKindFor(k.new().object())
	if err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind + "List"})
	if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	var out []workload
	for i := range list.Items {
		w := k.new()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, w.object()); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// picksMany reports whether s names workloads otherwise than by the arguments.
func (s *selection) picksMany() bool { return s.files.given() || s.all || s.selector != "" }
