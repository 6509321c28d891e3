package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// namedWorkload is a workload named otherwise than by the arguments: by a manifest file.
type namedWorkload struct {
	kind *Kind
	key  client.ObjectKey
}

// withFiles gives cmd, a command that names its workload by its arguments (Env.target), kubectl's
// -f, -k and -R: it then runs once for each workload the manifests name, as if the arguments had
// named it (only is set: the files must name exactly one object, as kubectl rollout status wants).
// Objects of kinds kubectl-kruise does not drive are refused, each named, after the others ran.
func withFiles(env *Env, cmd *cobra.Command, only bool) *cobra.Command {
	var f fileFlags
	f.addFlags(cmd, "to "+cmd.Name())
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if !f.given() {
			return run(cmd, args)
		}
		if len(args) > 0 {
			return fmt.Errorf("-f and -k name the workloads: give no TYPE/NAME with them (got %s)", strings.Join(args, " "))
		}
		ms, refused, err := env.readManifests(f)
		if err != nil {
			return err
		}
		if n := len(ms) + len(refused); only && n != 1 {
			return fmt.Errorf("rollout %s follows one workload: the files name %d objects", cmd.Name(), n)
		}
		defer func() { env.named = nil }()
		var errs []error
		for _, m := range ms {
			env.named = &namedWorkload{kind: m.kind, key: client.ObjectKeyFromObject(m.obj)}
			if err := run(cmd, nil); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(append(errs, refused...)...)
	}
	return cmd
}
