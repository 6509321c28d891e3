package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
)

// globalOptions are the flags every command takes besides the connection flags: kubectl's
// --match-server-version, --warnings-as-errors and --profile, and the basic-auth flags kubectl
// no longer has, taken to refuse them.
type globalOptions struct {
	matchServerVersion, warningsAsErrors bool
	profile, profileOutput               string
	username, password                   string

	warnings    *warningRecorder
	stopProfile func() error
}

func (o *globalOptions) addFlags(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.BoolVar(&o.matchServerVersion, "match-server-version", false, "refuse to run unless the server's Kubernetes major.minor is the client's")
	f.BoolVar(&o.warningsAsErrors, "warnings-as-errors", false, "exit non-zero when the server sent a warning")
	f.StringVar(&o.profile, "profile", "none", "write a profile on exit: none, cpu, heap, goroutine, threadcreate, block or mutex")
	f.StringVar(&o.profileOutput, "profile-output", "profile.pprof", "the file --profile writes")
	f.StringVar(&o.username, "username", "", "refused: basic authentication is gone from Kubernetes; use a token or a client certificate")
	f.StringVar(&o.password, "password", "", "refused: basic authentication is gone from Kubernetes; use a token or a client certificate")
	_ = f.MarkHidden("username")
	_ = f.MarkHidden("password")
}

// before checks and sets up what the global flags ask, before any command runs.
func (e *Env) before(cmd *cobra.Command) error {
	o := &e.global
	for _, name := range []string{"username", "password"} {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s: basic authentication (--username/--password) was removed from Kubernetes and kubectl; "+
				"authenticate with --token, a client certificate (--client-certificate, --client-key) or the kubeconfig's user", name)
		}
	}
	stop, err := startProfile(o.profile, o.profileOutput)
	if err != nil {
		return err
	}
	o.stopProfile = stop
	o.warnings = &warningRecorder{out: e.Streams.ErrOut}
	wrap := e.Flags.WrapConfigFn
	e.Flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		if wrap != nil {
			c = wrap(c)
		}
		c.WarningHandler, c.WarningHandlerWithContext = nil, o.warnings
		return c
	}
	if o.matchServerVersion {
		return e.matchServerVersion()
	}
	return nil
}

// after ends what before set up, once the command ran with err: the profile is written, and a
// warning is an error with --warnings-as-errors.
func (e *Env) after(err error) error {
	o := &e.global
	if o.stopProfile != nil {
		if perr := o.stopProfile(); perr != nil && err == nil {
			err = perr
		}
		o.stopProfile = nil
	}
	if n := o.warnings.count(); err == nil && o.warningsAsErrors && n > 0 {
		err = fmt.Errorf("%d warning(s) received from the server, and --warnings-as-errors is set", n)
	}
	return err
}

// wrapRun has every command of root run between before and after.
func (e *Env) wrapRun(root *cobra.Command) {
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return e.before(cmd) }
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if run := c.Run; run != nil {
			c.RunE, c.Run = func(cmd *cobra.Command, args []string) error { run(cmd, args); return nil }, nil
		}
		if run := c.RunE; run != nil {
			c.RunE = func(cmd *cobra.Command, args []string) error { return e.after(run(cmd, args)) }
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// warningRecorder prints the server's warnings as kubectl does and counts them.
type warningRecorder struct {
	mu  sync.Mutex
	out io.Writer
	n   int
}

func (w *warningRecorder) HandleWarningHeaderWithContext(_ context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	fmt.Fprintf(w.out, "Warning: %s\n", text)
}

func (w *warningRecorder) count() int {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// startProfile starts the profile --profile names, written to output by the function it gives.
func startProfile(name, output string) (func() error, error) {
	switch name {
	case "none", "":
		return nil, nil
	case "cpu":
		f, err := os.Create(output)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		return func() error { pprof.StopCPUProfile(); return f.Close() }, nil
	case "block":
		runtime.SetBlockProfileRate(1)
	case "mutex":
		runtime.SetMutexProfileFraction(1)
	case "heap", "goroutine", "threadcreate":
	default:
		return nil, fmt.Errorf("--profile %q: want none, cpu, heap, goroutine, threadcreate, block or mutex", name)
	}
	return func() error {
		if name == "heap" {
			runtime.GC()
		}
		f, err := os.Create(output)
		if err != nil {
			return err
		}
		return errors.Join(pprof.Lookup(name).WriteTo(f, 0), f.Close())
	}, nil
}

// matchServerVersion refuses a server whose Kubernetes major.minor is not the client's: the
// Kubernetes release of the client-go kubectl-kruise is built with.
func (e *Env) matchServerVersion() error {
	ask := e.serverVersion
	if ask == nil {
		ask = func() (*apimachineryversion.Info, error) {
			d, err := e.Flags.ToDiscoveryClient()
			if err != nil {
				return nil, err
			}
			return d.ServerVersion()
		}
	}
	server, err := ask()
	if err != nil {
		return fmt.Errorf("--match-server-version: ask the server's version: %w", err)
	}
	major, minor := clientKubeVersion()
	if strings.TrimSuffix(server.Major, "+") != major || strings.TrimSuffix(server.Minor, "+") != minor {
		return fmt.Errorf("--match-server-version: the server is Kubernetes %s.%s (%s), kubectl-kruise's client is %s.%s",
			server.Major, server.Minor, server.GitVersion, major, minor)
	}
	return nil
}

// clientKubeVersion is the Kubernetes major.minor of the client-go kubectl-kruise is built with
// (client-go v0.M.P is Kubernetes 1.M).
func clientKubeVersion() (major, minor string) {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "k8s.io/client-go" {
				if parts := strings.Split(strings.TrimPrefix(d.Version, "v"), "."); len(parts) >= 2 && parts[0] == "0" {
					return "1", parts[1]
				}
			}
		}
	}
	return "1", fallbackClientMinor
}

// fallbackClientMinor is client-go's minor when the build does not record it (go.mod's v0.37).
const fallbackClientMinor = "37"
