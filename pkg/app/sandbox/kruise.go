package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/app/manager"
)

// Kruise's identity and namespace in the sandbox.
const (
	// KruiseNamespace holds the manager's Secret, Lease and namespaced RBAC.
	KruiseNamespace = "kruise-system"
	// KruiseManagerUser is the user name of the manager's client certificate, bound to the
	// generated roles: RBAC is exercised, and the audit log attributes its requests to it.
	KruiseManagerUser = "kruise-manager"
	// KwokUser is the user name of kwok's client certificate: the fake kubelets' writes in the
	// audit log.
	KwokUser = "kwok-controller"
)

// startKruise installs Kruise's CRDs, RBAC and webhook configurations and runs kruise-manager as a
// host process, registered with the API server by URL (the API server cannot reach Services here),
// and, when daemon is set, kruise-daemon for the real node.
func (s *Sandbox) startKruise(ctx context.Context, binary, daemon string) error {
	kubeconfig, err := s.KubeconfigFor(KruiseManagerUser)
	if err != nil {
		return err
	}
	c, err := s.kruiseClient()
	if err != nil {
		return err
	}
	if err := install.Apply(ctx, c, installOptions()); err != nil {
		return fmt.Errorf("install Kruise: %w", err)
	}
	// kruise-daemon's account exists whether or not a daemon runs, with the policy that binds its
	// writes to its node (tests send writes with tokens of it).
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: KruiseNamespace, Name: install.DaemonServiceAccount}}
	if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create kruise-daemon's service account: %w", err)
	}
	if err := s.createMetricsScraper(ctx); err != nil {
		return err
	}
	s.logf("installed Kruise CRDs, RBAC and webhook configurations")
	s.Kruise = true
	args := []string{
		"--namespace=" + KruiseNamespace,
		"--leader-election-namespace=" + KruiseNamespace,
		"--webhook-host=127.0.0.1",
		"--webhook-port=" + strconv.Itoa(s.Ports.KruiseWebhook),
		"--webhook-url-host=127.0.0.1",
		"--webhook-cert-dir=" + filepath.Join(s.Dir, kruiseDir, "webhook-certs"),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(s.Ports.KruiseProbe),
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(s.Ports.KruiseMetrics),
		"--pprof-bind-address=127.0.0.1:" + strconv.Itoa(s.Ports.KruisePprof),
	}
	// Only the API server (its client certificate) and the replicas may call the webhooks.
	args = append(args, s.webhookClientArgs()...)
	if daemon != "" {
		args = append(args, "--feature-gates="+DaemonGates)
	} else {
		args = append(args, "--feature-gates="+NoDaemonGates)
	}
	if _, err := s.run("kruise-manager", binary, args, []string{"KUBECONFIG=" + kubeconfig}); err != nil {
		return err
	}
	if err := s.waitKruiseReady(ctx); err != nil {
		return err
	}
	if daemon == "" {
		return nil
	}
	return s.startKruiseDaemon(ctx, daemon)
}

// InstallCRDs installs Kruise's CRDs only, so objects of its kinds can be loaded before Kruise
// starts (StartKruise), as on a cluster taken over from OpenKruise.
func (s *Sandbox) InstallCRDs(ctx context.Context) error {
	c, err := s.kruiseClient()
	if err != nil {
		return err
	}
	return install.ApplyCRDs(ctx, c, installOptions())
}

// kruiseClient is an admin client of the sandbox that knows Kruise's kinds.
func (s *Sandbox) kruiseClient() (client.Client, error) {
	cfg, err := s.RESTConfig()
	if err != nil {
		return nil, err
	}
	scheme, err := manager.NewScheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// installOptions are how the sandbox installs Kruise: in KruiseNamespace, for KruiseManagerUser.
func installOptions() install.Options {
	return install.Options{Namespace: KruiseNamespace, WebhookService: "kruise-webhook-service",
		Subject:       rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: KruiseManagerUser},
		DaemonSubject: &rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: KruiseNamespace, Name: install.DaemonServiceAccount}}
}

// StartKruise installs Kruise and starts kruise-manager (binary) in a sandbox started without it;
// it returns once the manager is ready.
func (s *Sandbox) StartKruise(ctx context.Context, binary string) error {
	if s.Kruise {
		return fmt.Errorf("sandbox %s already runs Kruise", s.Dir)
	}
	return s.startKruise(ctx, binary, "")
}

// startKruiseDaemon runs kruise-daemon for the real node, on the real node's containerd, as its
// service account with a token bound to the real node: the token names the node, and the policy
// install.DaemonNodePolicy holds the daemon to that node's objects, as in a cluster (where the
// kubelet projects a token bound to the daemon's pod).
func (s *Sandbox) startKruiseDaemon(ctx context.Context, binary string) error {
	cs, err := s.clientset()
	if err != nil {
		return err
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, RealNodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read the real node: %w", err)
	}
	kubeconfig, err := s.KubeconfigForServiceAccount(ctx, KruiseNamespace, install.DaemonServiceAccount,
		authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: node.Name, UID: node.UID})
	if err != nil {
		return err
	}
	args := []string{
		"--node-name=" + RealNodeName,
		"--runtime-endpoint=unix://" + ContainerdSocket(),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(s.Ports.KruiseDaemon),
	}
	if _, err := s.run("kruise-daemon", binary, args, []string{"KUBECONFIG=" + kubeconfig}); err != nil {
		return err
	}
	return s.waitFor(ctx, "kruise-daemon healthy", func(ctx context.Context) (bool, error) {
		return httpOK(ctx, url("https", s.Ports.KruiseDaemon)+"/healthz", "ok"), nil
	})
}

// waitKruiseReady waits for kruise-manager's readiness and for its metrics endpoint to answer
// (any status: an unauthenticated probe gets 401), so that scrapes right after work.
func (s *Sandbox) waitKruiseReady(ctx context.Context) error {
	return s.waitFor(ctx, "kruise-manager ready", func(ctx context.Context) (bool, error) {
		if !httpOK(ctx, url("http", s.Ports.KruiseProbe)+"/readyz", "ok") {
			return false, nil
		}
		code, _, err := GetMetrics(ctx, s.Ports.KruiseMetrics, "")
		return err == nil && code != 0, nil
	})
}

// CrashKruiseManager kills kruise-manager with SIGKILL, as a crash or a node failure would, and
// starts a new one with the same binary, flags and identity; it returns once the new one is ready.
// Tests use it to show that a rollout survives the manager.
func (s *Sandbox) CrashKruiseManager(ctx context.Context) error {
	return s.restartKruise(ctx, "killed", (*Process).Kill, func(args []string) []string { return args })
}

// RestartKruiseManager stops kruise-manager (SIGTERM) and starts it again with --feature-gates=gates
// in place of the gates it had ("" for the defaults; without kruise-daemon NoDaemonGates stay unless
// gates names them; ImagePullJobs keep running, as the chart has them, unless gates names
// ImagePullJobGate); it returns once the new one is ready.
func (s *Sandbox) RestartKruiseManager(ctx context.Context, gates string) error {
	if !s.hasProcess("kruise-daemon") && !strings.Contains(gates, "InPlaceUpdateEnvFromMetadata") {
		gates = strings.Trim(NoDaemonGates+","+gates, ",")
	} else if !strings.Contains(gates, "ImagePullJobGate") {
		gates = strings.Trim("ImagePullJobGate=true,"+gates, ",")
	}
	stop := func(p *Process) error { return p.Stop(10 * time.Second) }
	return s.restartKruise(ctx, "stopped", stop, func(args []string) []string {
		var out []string
		for _, a := range args {
			if !strings.HasPrefix(a, "--feature-gates=") {
				out = append(out, a)
			}
		}
		if gates != "" {
			out = append(out, "--feature-gates="+gates)
		}
		return out
	})
}

// WithoutKruiseManager stops kruise-manager (SIGTERM), runs during while no manager runs (an
// outage: its webhooks cannot be reached), and starts it again with the same binary, flags and
// identity whatever during returned; it returns once the new one is ready, with during's error.
func (s *Sandbox) WithoutKruiseManager(ctx context.Context, during func() error) error {
	var duringErr error
	stop := func(p *Process) error {
		if err := p.Stop(10 * time.Second); err != nil {
			return err
		}
		duringErr = during()
		return nil
	}
	if err := s.restartKruise(ctx, "stopped", stop, func(args []string) []string { return args }); err != nil {
		return err
	}
	return duringErr
}

// DaemonGates are the feature gates that need kruise-daemon on the pods' nodes, which the sandbox
// turns on when it runs one: image pre-download for in-place updates (of CloneSets and Advanced
// StatefulSets, and of Advanced DaemonSets), and in-place restarts of containers whose env reads
// changed metadata.
const DaemonGates = "PreDownloadImageForInPlaceUpdate=true,PreDownloadImageForDaemonSetUpdate=true,InPlaceUpdateEnvFromMetadata=true"

// NoDaemonGates turn off what needs kruise-daemon (on by default, as in OpenKruise) in a sandbox
// that runs none: a container whose env reads changed metadata is recreated with its pod instead.
// ImagePullJobs run (off in kruise-manager, on in OpenKruise's chart and Kruise's; DaemonGates turn
// them on through pre-download): the kwok nodes report no pulls, and the jobs' bookkeeping is
// what a sandbox without kruise-daemon shows.
const NoDaemonGates = "InPlaceUpdateEnvFromMetadata=false,ImagePullJobGate=true"

// hasProcess reports whether the sandbox runs a process of that name.
func (s *Sandbox) hasProcess(name string) bool {
	return s.process(name) != nil
}

// CrashKruiseDaemon kills kruise-daemon with SIGKILL and starts it again with the same binary,
// flags and identity; it returns once the new one is healthy.
func (s *Sandbox) CrashKruiseDaemon(ctx context.Context) error {
	return s.restartProcess(ctx, "kruise-daemon", "killed", (*Process).Kill, func(args []string) []string { return args },
		func(ctx context.Context) error {
			return s.waitFor(ctx, "kruise-daemon healthy", func(ctx context.Context) (bool, error) {
				return httpOK(ctx, url("https", s.Ports.KruiseDaemon)+"/healthz", "ok"), nil
			})
		})
}

func (s *Sandbox) restartKruise(ctx context.Context, how string, stop func(*Process) error, args func([]string) []string) error {
	return s.restartProcess(ctx, "kruise-manager", how, stop, args, s.waitKruiseReady)
}

// restartProcess stops the sandbox's process name with stop, starts it again with args of its
// old arguments, and waits for it with ready. A process that exits at once for a passing reason
// (startsAgain) is started again, up to 20 times in 10 s.
func (s *Sandbox) restartProcess(ctx context.Context, name, how string, stop func(*Process) error, args func([]string) []string,
	ready func(context.Context) error) error {
	for i, p := range s.Processes {
		if p.Name != name {
			continue
		}
		if err := stop(p); err != nil {
			return err
		}
		s.logf("%s %s (pid %d)", how, name, p.PID)
		spec := Process{Name: p.Name, Binary: p.Binary, Args: args(p.Args), Env: p.Env, Dir: p.Dir, Log: p.Log}
		for attempt := 0; ; attempt++ {
			logStart := fileSize(spec.Log) // what this start writes follows
			np, err := startProcess(spec)
			if err != nil {
				return err
			}
			s.Processes[i] = np
			s.logf("restarted %s (pid %d)", name, np.PID)
			if err := s.saveState(); err != nil {
				return err
			}
			err = ready(ctx)
			if err == nil || np.Alive() || attempt == 19 || !startsAgain(logFrom(np.Log, logStart)) {
				return err
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	return fmt.Errorf("no %s runs in sandbox %s", name, s.Dir)
}
