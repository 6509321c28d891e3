// Package cli is kubectl-kruise, the kubectl plugin for Kruise workloads (CloneSet for now):
// rollout status/pause/resume/history/undo, set image and scaledown. It takes kubectl's connection
// flags (--kubeconfig, --context, -n, ...) through cli-runtime.
package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/version"
)

// NewRoot is the kubectl-kruise command.
func NewRoot(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:           "kubectl-kruise",
		Short:         "Drive Kruise workloads (CloneSet) from kubectl: kubectl kruise rollout status clone/NAME",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	flags.AddFlags(root.PersistentFlags())
	env := &Env{Flags: flags, Streams: streams}
	root.AddCommand(
		&cobra.Command{Use: "version", Short: "Print the version", Run: func(*cobra.Command, []string) {
			fmt.Fprintln(streams.Out, version.String("kubectl-kruise"))
		}},
		newRolloutCommand(env),
		newSetCommand(env),
		newScaledownCommand(env),
		newMigrateCommand(env),
	)
	return root
}

// Env is what every command uses: the connection flags and the streams.
type Env struct {
	Flags   *genericclioptions.ConfigFlags
	Streams genericiooptions.IOStreams
}

// Client is a client for Kruise's kinds and the namespace the flags name (or the kubeconfig's).
func (e *Env) Client() (client.Client, string, error) {
	cfg, err := e.Flags.ToRESTConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := e.Flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, appsv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, "", err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	return c, ns, err
}

// ParseWorkload reads "clone/NAME", "cloneset/NAME", "cloneset.apps.kruise.io/NAME" or, with two
// arguments, "cloneset NAME"; it returns the name. Other kinds are refused with what is supported.
func ParseWorkload(args []string) (string, error) {
	var kind, name string
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		kind, name, _ = strings.Cut(args[0], "/")
	case len(args) == 2:
		kind, name = args[0], args[1]
	default:
		return "", fmt.Errorf("name a workload as KIND/NAME or KIND NAME, e.g. clone/web")
	}
	switch strings.ToLower(kind) {
	case "clone", "clones", "cloneset", "clonesets", "cloneset.apps.kruise.io", "clonesets.apps.kruise.io":
	default:
		return "", fmt.Errorf("kind %q is not supported yet: kubectl-kruise drives CloneSets (clone/NAME)", kind)
	}
	if name == "" {
		return "", fmt.Errorf("the workload's name is empty")
	}
	return name, nil
}
