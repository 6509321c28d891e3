// Command kruise-sandbox starts, inspects and stops a local Kubernetes cluster with simulated (kwok)
// nodes, built from the binaries of `make tools`. See package sandbox for what it guarantees.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/app/sandbox/storage"
	"github.com/kruise-ng/kruise/pkg/platform/version"
)

const usage = `usage: kruise-sandbox <command> [flags]

commands:
  up       start a sandbox: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok nodes,
           a storage provisioner (StorageClasses standard, the default, and expandable)
  down     stop the processes a sandbox started and remove its state
  status   show what a sandbox runs
  demo     start a sandbox with Kruise and roll a 50-pod CloneSet from v1 to v2 in place, live
  version  print the version

Run 'kruise-sandbox <command> -h' for the flags of a command.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command and returns the process exit code: 0 success, 1 failure, 2 bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "up":
		err = up(args[1:], stdout, stderr)
	case "down":
		err = down(args[1:], stdout, stderr)
	case "status":
		err = status(args[1:], stdout, stderr)
	case "demo":
		err = demoCmd(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, version.String("kruise-sandbox"))
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "kruise-sandbox: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	default:
		fmt.Fprintf(stderr, "kruise-sandbox %s: %v\n", args[0], err)
		return 1
	}
}

// usageError is a flag error already reported by the flag set.
type usageError struct{ error }

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

func newFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("kruise-sandbox "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", ".sandbox", "folder holding the sandbox's state (kubeconfig, certificates, etcd data, logs)")
	return fs, dir
}

// upFlags are the flags of a sandbox start (up and demo).
type upFlags struct {
	nodes, apiPort     *int
	audit, realNode    *bool
	noReadyRewrite     *bool
	binDir             *string
	managerBin, daemon *string
	timeout            *time.Duration
}

func addUpFlags(fs *flag.FlagSet, nodes int, timeout time.Duration) *upFlags {
	return &upFlags{
		nodes:      fs.Int("nodes", nodes, "number of kwok (simulated) nodes"),
		audit:      fs.Bool("audit-log", false, "write a Metadata-level API audit log to DIR/audit.log"),
		binDir:     fs.String("bin-dir", "", "folder with etcd, kube-* and kwok binaries (default: bin/k8s of the Kruise checkout)"),
		timeout:    fs.Duration("timeout", timeout, "how long to wait for the sandbox to become ready"),
		managerBin: fs.String("kruise-manager", "", "kruise-manager binary (default: next to this binary)"),
		daemon:     fs.String("kruise-daemon", "", "kruise-daemon binary run for the real node (default: next to this binary)"),
		realNode:   fs.Bool("real-node", false, "add a real node: an offline image registry, containerd and a kubelet (root on Linux; installs runc, busybox-static and CNI plugins when missing)"),
		apiPort:    fs.Int("api-port", 0, "loopback port of the API server (0: a free port)"),
		noReadyRewrite: fs.Bool("no-ready-rewrite", false,
			"kwok nodes whose kubelet does not rewrite a Ready it did not compute: an in-place update taking a pod out of service gets no Ready False from it (docs/sandbox.md)"),
	}
}

// config is the sandbox the flags ask for, in dir; kruise runs kruise-manager (and kruise-daemon
// on a real node).
func (f *upFlags) config(dir string, kruise bool, log io.Writer) (sandbox.Config, error) {
	binDir := *f.binDir
	if binDir == "" {
		d, err := sandbox.DefaultBinDir()
		if err != nil {
			return sandbox.Config{}, err
		}
		binDir = d
	}
	exe, err := os.Executable()
	if err != nil {
		return sandbox.Config{}, err
	}
	manager, daemon := *f.managerBin, *f.daemon
	if manager == "" {
		manager = filepath.Join(filepath.Dir(exe), "kruise-manager")
	}
	if daemon == "" && *f.realNode {
		daemon = filepath.Join(filepath.Dir(exe), "kruise-daemon")
	}
	if !kruise {
		manager, daemon = "", ""
	}
	return sandbox.Config{Dir: dir, Nodes: *f.nodes, AuditLog: *f.audit, BinDir: binDir, Log: log,
		Timeout: *f.timeout, KruiseManager: manager, KruiseDaemon: daemon, RealNode: *f.realNode,
		APIServerPort: *f.apiPort, NoReadyRewrite: *f.noReadyRewrite}, nil
}

func up(args []string, stdout, stderr io.Writer) error {
	fs, dir := newFlags("up", stderr)
	uf := addUpFlags(fs, 3, 2*time.Minute)
	kruise := fs.Bool("kruise", false, "install Kruise (CRDs, RBAC, webhooks) and run kruise-manager with the sandbox (and kruise-daemon with --real-node)")
	rollouts := fs.Bool("kruise-rollouts", false, "with --kruise: also install and run Kruise Rollouts (openkruise/rollouts; `make tools` builds it into the bin dir)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *rollouts && !*kruise {
		return usageError{errors.New("--kruise-rollouts runs on Kruise: add --kruise")}
	}
	cfg, err := uf.config(*dir, *kruise, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t0 := time.Now()
	sb, err := sandbox.Up(ctx, cfg)
	if err != nil {
		return err
	}
	if *rollouts {
		// Its manager stops with the sandbox (down); its objects go with the cluster's.
		if _, err := sb.StartKruiseRollouts(ctx, filepath.Join(cfg.BinDir, "kruise-rollout")); err != nil {
			return errors.Join(fmt.Errorf("start Kruise Rollouts: %w", err), sb.Down())
		}
	}
	fmt.Fprintf(stdout, "Sandbox up in %.1fs: %d kwok node(s) Ready, API server %s\n", time.Since(t0).Seconds(), sb.Nodes, sb.Server())
	if sb.NoReadyRewrite {
		fmt.Fprintln(stdout, "Node profile: no-rewrite (the kwok nodes' kubelet does not rewrite a Ready it did not compute)")
	}
	fmt.Fprintf(stdout, "Storage: StorageClasses %s (default) and %s (volumes can grow), volumes in %s\n",
		storage.StandardClass, storage.ExpandableClass, sb.VolumesDir())
	if sb.AuditLog != "" {
		fmt.Fprintf(stdout, "Audit log: %s\n", sb.AuditLog)
	}
	if rn := sb.RealNode; rn != nil {
		fmt.Fprintf(stdout, "Real node: %s (kubelet at %s:%d, containerd %s), images in %s: %s, %s\n",
			rn.Name, sandbox.RealNodeIP, sb.Ports.Kubelet, sandbox.ContainerdSocket(), rn.Registry, sb.Image("app:v1"), sb.Image("app:v2"))
	}
	if sb.Kruise {
		fmt.Fprintf(stdout, "Kruise: kruise-manager runs (webhooks at https://127.0.0.1:%d, log %s)\n",
			sb.Ports.KruiseWebhook, filepath.Join(sb.Dir, "logs", "kruise-manager.log"))
		fmt.Fprintf(stdout, "Metrics: curl -k -H \"Authorization: Bearer $(cat %s)\" https://127.0.0.1:%d/metrics\n",
			sb.MetricsTokenFile(), sb.Ports.KruiseMetrics)
	}
	if *rollouts {
		fmt.Fprintf(stdout, "Kruise Rollouts: its manager runs (namespace %s, log %s)\n", sandbox.RolloutsNamespace,
			filepath.Join(sb.Dir, "logs", "kruise-rollout.log"))
	}
	kubectl := "kubectl"
	if _, err := os.Stat(filepath.Join(cfg.BinDir, "kubectl")); err == nil {
		kubectl = shortPath(filepath.Join(cfg.BinDir, "kubectl"))
	}
	fmt.Fprintf(stdout, "\nUse it:\n  export KUBECONFIG=%s\n  %s get nodes\n", sb.Kubeconfig(), kubectl)
	self := "kruise-sandbox"
	if exe, err := os.Executable(); err == nil {
		self = shortPath(exe)
	}
	fmt.Fprintf(stdout, "Inspect and stop it:\n  %s status --dir %s\n  %s down --dir %s\n", self, *dir, self, *dir)
	return nil
}

// shortPath returns p relative to the working directory when that is shorter.
func shortPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && len(rel) < len(p) {
		return rel
	}
	return p
}

func load(dir string) (*sandbox.Sandbox, error) {
	sb, err := sandbox.Load(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no sandbox in %s (no %s)", dir, filepath.Join(dir, "sandbox.json"))
	}
	return sb, err
}

func down(args []string, stdout, stderr io.Writer) error {
	fs, dir := newFlags("down", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	sb, err := load(*dir)
	if err != nil {
		return err
	}
	if err := sb.Down(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Sandbox in %s stopped (%d process(es)) and its state removed.\n", sb.Dir, len(sb.Processes))
	return nil
}

func status(args []string, stdout, stderr io.Writer) error {
	fs, dir := newFlags("status", stderr)
	pids := fs.Bool("pids", false, "list the PIDs the sandbox started")
	if err := parse(fs, args); err != nil {
		return err
	}
	sb, err := load(*dir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	procs, apiReady := sb.Status(ctx)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "sandbox\t%s (started %s)\n", sb.Dir, sb.Started.Format(time.RFC3339))
	fmt.Fprintf(tw, "api server\t%s ready=%v\n", sb.Server(), apiReady)
	fmt.Fprintf(tw, "kubeconfig\t%s\n", sb.Kubeconfig())
	fmt.Fprintf(tw, "kwok nodes\t%d\n", sb.Nodes)
	fmt.Fprintf(tw, "kruise\t%v\n", sb.Kruise)
	if rn := sb.RealNode; rn != nil {
		fmt.Fprintf(tw, "real node\t%s (kubelet %s:%d, containerd %s)\n", rn.Name, sandbox.RealNodeIP, sb.Ports.Kubelet, sandbox.ContainerdSocket())
		fmt.Fprintf(tw, "registry\t%s (%d images)\n", rn.Registry, len(rn.Images))
		if sb.Kruise && sb.Ports.KruiseDaemon != 0 {
			fmt.Fprintf(tw, "kruise-daemon\thttps://127.0.0.1:%d/healthz, /metrics\n", sb.Ports.KruiseDaemon)
		}
	}
	if sb.AuditLog != "" {
		fmt.Fprintf(tw, "audit log\t%s\n", sb.AuditLog)
	}
	fmt.Fprintln(tw)
	if *pids {
		fmt.Fprintln(tw, "PROCESS\tPID\tSTATE\tLOG")
	} else {
		fmt.Fprintln(tw, "PROCESS\tSTATE\tLOG")
	}
	down := 0
	for _, p := range procs {
		state := "running"
		if !p.Running {
			state, down = "exited", down+1
		}
		if *pids {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", p.Name, p.PID, state, p.Log)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, state, p.Log)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if down > 0 || !apiReady {
		return fmt.Errorf("sandbox degraded: %d process(es) exited, API server ready=%v", down, apiReady)
	}
	return nil
}
