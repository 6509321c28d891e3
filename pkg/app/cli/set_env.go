package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// envOptions are set env's flags, named as kubectl's.
type envOptions struct {
	setOptions
	containers string
	env        []string
	from       string
	prefix     string
	keys       []string
	list       bool
	resolve    bool
	overwrite  bool
}

func newSetEnvCommand(env *Env) *cobra.Command {
	o := &envOptions{}
	cmd := &cobra.Command{
		Use:   "env (" + workloadUse + " | TYPE --all | TYPE -l SELECTOR | -f FILE) KEY=VALUE ... KEY-",
		Short: "Set or remove environment variables of a workload's containers (the controller recreates the pods)",
		Long: "Set (KEY=VALUE, -e KEY=VALUE, --from=secret/NAME or configmap/NAME) or remove (KEY-) environment variables of " +
			"the containers of a workload's pod template that -c matches (* for any run of characters; all of them by " +
			"default), or list them (--list, with the changes, sending nothing). \"-\" reads KEY=VALUE lines from stdin. " +
			"An env change cannot be made in place: the controller recreates the pods by its update strategy.\n\n" + selectionHelp,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd.Context(), env, args) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.containers, "containers", "c", "*", "the containers to change, by name; * matches any run of characters")
	f.StringArrayVarP(&o.env, "env", "e", nil, "KEY=VALUE to set in each container (repeatable; - reads stdin)")
	f.StringVar(&o.from, "from", "", "secret/NAME or configmap/NAME: set a variable per key, read from it")
	f.StringVar(&o.prefix, "prefix", "", "prefix of the names of the variables set")
	f.StringSliceVar(&o.keys, "keys", nil, "with --from, only these keys (comma separated)")
	f.BoolVar(&o.list, "list", false, "print the containers' variables (with the changes) and change nothing")
	f.BoolVar(&o.resolve, "resolve", false, "with --list, print the values of secret and configmap references")
	f.BoolVar(&o.overwrite, "overwrite", true, "let a variable's value be replaced; with --overwrite=false that is an error")
	o.addFlags(cmd, "env updated")
	return cmd
}

// run sets, removes or lists the variables args and the flags name.
func (o *envOptions) run(ctx context.Context, env *Env, args []string) error {
	target, changes, err := splitChanges(args, isEnvArg, "KEY=VALUE or KEY-")
	if err != nil {
		return err
	}
	switch {
	case len(o.keys) > 0 && o.from == "":
		return fmt.Errorf("--keys picks keys of --from: name a secret/NAME or configmap/NAME")
	case o.local && (o.from != "" || o.resolve):
		return fmt.Errorf("--from and --resolve read from the server, which --local does not contact")
	}
	set, remove, err := parseEnv(append(slices.Clone(o.env), changes...), env.Streams.In)
	if err != nil {
		return err
	}
	if o.from != "" {
		vars, err := env.envFrom(ctx, o.from, o.keys)
		if err != nil {
			return err
		}
		set = append(set, vars...)
	}
	for i := range set {
		set[i].Name = o.prefix + set[i].Name
	}
	if !o.list && len(set) == 0 && len(remove) == 0 {
		return fmt.Errorf("at least one environment variable must be provided (KEY=VALUE, KEY-, -e or --from)")
	}
	change := func(w workload) error {
		return updateEnv(w.template().Spec.Containers, o.containers, set, remove, o.overwrite)
	}
	if o.list {
		return env.listEnv(ctx, target, o.selection, o.containers, o.resolve, change)
	}
	return env.setTemplate(ctx, target, o.setOptions, "env updated", change)
}

// isEnvArg reports whether a set env argument is a change: KEY=VALUE, KEY- or "-" (stdin).
func isEnvArg(arg string) bool {
	k, _, ok := strings.Cut(arg, "=")
	return (ok && k != "") || strings.HasSuffix(arg, "-")
}

// envAssignment is KEY=VALUE whose KEY has only letters, digits and underscores, as kubectl wants it.
var envAssignment = regexp.MustCompile(`^\w+=`)

// parseEnv reads set env's changes: KEY=VALUE to set, KEY- to remove, "-" for KEY=VALUE lines from
// in (# starts a comment). A variable both set and removed is an error.
func parseEnv(specs []string, in io.Reader) (set []corev1.EnvVar, remove []string, err error) {
	for _, s := range specs {
		switch {
		case s == "-":
			if in == nil {
				return nil, nil, fmt.Errorf(`"-" reads variables from stdin, which is not open`)
			}
			vars, err := readEnv(in)
			if err != nil {
				return nil, nil, err
			}
			set = append(set, vars...)
		case envAssignment.MatchString(s):
			name, value, _ := strings.Cut(s, "=")
			set = append(set, corev1.EnvVar{Name: name, Value: value})
		case strings.HasSuffix(s, "-") && !strings.Contains(s, "="):
			remove = append(remove, strings.TrimSuffix(s, "-"))
		default:
			return nil, nil, fmt.Errorf("%q: environment variables are KEY=VALUE (KEY of letters, digits and underscores) or KEY- to remove one", s)
		}
	}
	for _, r := range remove {
		if slices.ContainsFunc(set, func(e corev1.EnvVar) bool { return e.Name == r }) {
			return nil, nil, fmt.Errorf("%s is both set and removed: do one or the other", r)
		}
	}
	return set, remove, nil
}

// readEnv reads KEY=VALUE lines; text after # is a comment, lines without = are skipped.
func readEnv(in io.Reader) ([]corev1.EnvVar, error) {
	var out []corev1.EnvVar
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if name, value, ok := strings.Cut(line, "="); ok {
			out = append(out, corev1.EnvVar{Name: name, Value: value})
		}
	}
	return out, sc.Err()
}

// envFrom is a variable per key of the secret or configmap from names (keys: only those, each of
// which it must have), in key order, named as kubectl names them (upper case, characters other
// than letters, digits and underscores turned into underscores), reading the key at run time.
func (e *Env) envFrom(ctx context.Context, from string, keys []string) ([]corev1.EnvVar, error) {
	typ, name, ok := strings.Cut(from, "/")
	if !ok || name == "" {
		return nil, fmt.Errorf("--from %q: name a secret/NAME or configmap/NAME", from)
	}
	c, ns, err := e.Client()
	if err != nil {
		return nil, err
	}
	key := client.ObjectKey{Namespace: ns, Name: name}
	var data []string
	var source func(k string) *corev1.EnvVarSource
	switch strings.ToLower(typ) {
	case "secret", "secrets":
		s := &corev1.Secret{}
		if err := c.Get(ctx, key, s); err != nil {
			return nil, err
		}
		data = slices.Sorted(maps.Keys(s.Data))
		source = func(k string) *corev1.EnvVarSource {
			return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: k}}
		}
	case "configmap", "configmaps", "cm":
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, key, cm); err != nil {
			return nil, err
		}
		data = slices.Sorted(maps.Keys(cm.Data))
		source = func(k string) *corev1.EnvVarSource {
			return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: k}}
		}
	default:
		return nil, fmt.Errorf("--from %q: variables come from a secret/NAME or configmap/NAME only", from)
	}
	for _, k := range keys {
		if !slices.Contains(data, k) {
			return nil, fmt.Errorf("--keys: %s has no key %q (it has %s)", from, k, strings.Join(data, ", "))
		}
	}
	var out []corev1.EnvVar
	for _, k := range data {
		if len(keys) == 0 || slices.Contains(keys, k) {
			out = append(out, corev1.EnvVar{Name: envName(k), ValueFrom: source(k)})
		}
	}
	return out, nil
}

var notEnvNameChar = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// envName is the variable a secret or configmap key becomes, as kubectl names it.
func envName(key string) string { return strings.ToUpper(notEnvNameChar.ReplaceAllString(key, "_")) }

// selectContainers are the containers whose name matches pattern (* for any run of characters).
func selectContainers(containers []corev1.Container, pattern string) ([]*corev1.Container, error) {
	var out []*corev1.Container
	for i := range containers {
		ok, err := path.Match(pattern, containers[i].Name)
		if err != nil {
			return nil, fmt.Errorf("--containers %q: %w", pattern, err)
		}
		if ok {
			out = append(out, &containers[i])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no container matches %q", pattern)
	}
	return out, nil
}

// updateEnv sets and removes variables of the containers pattern matches, as kubectl does: a set
// variable replaces one of its name where it is (refused when overwrite is false and the value
// differs), or is appended; a removed one is dropped.
func updateEnv(containers []corev1.Container, pattern string, set []corev1.EnvVar, remove []string, overwrite bool) error {
	selected, err := selectContainers(containers, pattern)
	if err != nil {
		return err
	}
	for _, c := range selected {
		var out []corev1.EnvVar
		for _, e := range c.Env {
			if slices.Contains(remove, e.Name) {
				continue
			}
			if i := slices.IndexFunc(set, func(s corev1.EnvVar) bool { return s.Name == e.Name }); i >= 0 {
				if !overwrite && (e.Value != set[i].Value || e.ValueFrom != nil) {
					return fmt.Errorf("container %s: %s already has a value (%s), and --overwrite is false", c.Name, e.Name, envValue(&e))
				}
				e = set[i]
			}
			out = append(out, e)
		}
		for _, s := range set {
			if !slices.ContainsFunc(out, func(e corev1.EnvVar) bool { return e.Name == s.Name }) {
				out = append(out, s)
			}
		}
		c.Env = out
	}
	return nil
}
