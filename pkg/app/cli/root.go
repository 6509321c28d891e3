package cli

import (
	"fmt"
	"net/url"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/platform/version"
)

// NewRoot is the kubectl-kruise command.
func NewRoot(streams genericiooptions.IOStreams) *cobra.Command {
	return newRoot(&Env{Flags: genericclioptions.NewConfigFlags(true), Streams: streams})
}

func newRoot(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "kubectl-kruise",
		Short:         "Drive Kruise workloads (CloneSet, Advanced StatefulSet, Advanced DaemonSet) from kubectl: kubectl kruise rollout status clone/NAME",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	env.Flags.AddFlags(root.PersistentFlags())
	env.global.addFlags(root)
	root.SetOut(env.Streams.Out)
	root.SetErr(env.Streams.ErrOut)
	root.AddCommand(
		&cobra.Command{Use: "version", Short: "Print the version", Run: func(*cobra.Command, []string) {
			fmt.Fprintln(env.Streams.Out, version.String("kubectl-kruise"))
		}},
		newRolloutCommand(env),
		newSetCommand(env),
		newScaledownCommand(env),
		newMigrateCommand(env),
		newSubsetsCommand(env),
		newCreateCommand(env),
		newExecCommand(env),
		newExposeCommand(env),
	)
	env.wrapRun(root)
	return root
}

// Env is what every command uses: the connection flags and the streams.
type Env struct {
	Flags   *genericclioptions.ConfigFlags
	Streams genericiooptions.IOStreams
	// client and namespace, when client is set, stand for the ones the flags give (tests), and
	// mapper, when set, for the API server's discovery.
	client    client.Client
	namespace string
	mapper    meta.RESTMapper
	// named, when set, is the workload a manifest file names, which target returns whatever the
	// arguments (withFiles runs a command once for each).
	named *namedWorkload
	// config and executor, when set, stand for the connection the flags give and the exec
	// sessions opened over it (tests).
	config   *rest.Config
	executor func(*rest.Config, *url.URL) (remotecommand.Executor, error)
	// serverVersion, when set, stands for the API server's version (tests).
	serverVersion func() (*apimachineryversion.Info, error)
	global        globalOptions
}

// restMapper resolves a TYPE as kubectl does: from the API server's discovery (cached where
// kubectl caches it), short names expanded. Nil when there is no server to ask; the kinds are
// then read by the names of Kruise's CRDs.
func (e *Env) restMapper() meta.RESTMapper {
	if e.mapper != nil || e.client != nil {
		return e.mapper
	}
	m, err := e.Flags.ToRESTMapper()
	if err != nil {
		return nil
	}
	return m
}

// parseWorkload reads the workload the arguments name (see ParseWorkload), its kind resolved as
// kubectl resolves a TYPE.
func (e *Env) parseWorkload(args []string) (*Kind, string, error) {
	return parseWorkload(e.restMapper(), args)
}

// Client is a client for Kruise's kinds and the namespace the flags name (or the kubeconfig's).
func (e *Env) Client() (client.Client, string, error) {
	if e.client != nil {
		return e.client, e.namespace, nil
	}
	cfg, err := e.Flags.ToRESTConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := e.Flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	scheme, err := newScheme()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	return c, ns, err
}

// newScheme holds the kinds the commands read and write.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, appsv1alpha1.AddToScheme, appsv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}
