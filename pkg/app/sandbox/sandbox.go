package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kruise-ng/kruise/pkg/platform/freeport"
)

// Config says what sandbox to start.
type Config struct {
	// Dir holds the sandbox's state: certificates, etcd data, logs, kubeconfig. Created if missing.
	Dir string
	// Nodes is the number of kwok (simulated) nodes to create.
	Nodes int
	// AuditLog makes the API server write a Metadata-level audit log to Dir/audit.log.
	AuditLog bool
	// BinDir holds etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok.
	BinDir string
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Timeout bounds the whole start; zero means two minutes.
	Timeout time.Duration
	// KruiseManager, when set, is the kruise-manager binary to install and run with the sandbox
	// (CRDs, RBAC, webhook configurations, and the manager as a host process registered by URL).
	KruiseManager string
	// RealNode adds a real node: an image registry, containerd and a kubelet (root on Linux).
	RealNode bool
	// KruiseDaemon, with KruiseManager and RealNode, is the kruise-daemon binary run as a host
	// process for the real node, over its containerd.
	KruiseDaemon string
	// APIServerPort, when not zero, is the loopback port the API server listens on (a stable
	// kubeconfig); a taken port fails the start. Zero picks a free port.
	APIServerPort int
	// NoReadyRewrite gives the kwok nodes a kubelet that does not rewrite a Ready it did not
	// compute (NodeProfile): an in-place update waiting for the kubelet's Ready False gets none.
	NoReadyRewrite bool
}

// State is what a running sandbox records in DIR/sandbox.json.
type State struct {
	Dir        string     `json:"dir"`
	CreatedDir bool       `json:"createdDir"`
	Started    time.Time  `json:"started"`
	Nodes      int        `json:"nodes"`
	AuditLog   string     `json:"auditLog,omitempty"`
	Ports      Ports      `json:"ports"`
	Processes  []*Process `json:"processes"`
	// Kruise is true when kruise-manager runs with the sandbox.
	Kruise bool `json:"kruise,omitempty"`
	// RealNode is set when the sandbox runs a real node (kubelet + containerd).
	RealNode *RealNodeState `json:"realNode,omitempty"`
	// NoReadyRewrite is set when the kwok nodes' kubelet does not rewrite a Ready it did not
	// compute (Config.NoReadyRewrite).
	NoReadyRewrite bool `json:"noReadyRewrite,omitempty"`
}

// NodeProfile is the profile of the sandbox's kwok nodes.
func (s *Sandbox) NodeProfile() NodeProfile { return NodeProfile{NoReadyRewrite: s.NoReadyRewrite} }

// Sandbox is a started (or loaded) sandbox.
type Sandbox struct {
	State
	log   io.Writer
	start time.Time
}

// Kubeconfig is the path of the admin kubeconfig (user kruise-admin, group system:masters).
func (s *Sandbox) Kubeconfig() string { return filepath.Join(s.Dir, adminConfig) }

// Server is the API server's URL.
func (s *Sandbox) Server() string { return url("https", s.Ports.APIServer) }

// RESTConfig returns an admin client configuration for the sandbox's API server.
func (s *Sandbox) RESTConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", s.Kubeconfig())
}

func (s *Sandbox) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "[sandbox %5.1fs] %s\n", time.Since(s.start).Seconds(), fmt.Sprintf(format, args...))
}

// Up starts a sandbox and returns once the API server is ready, every node is Ready and the
// default service account exists (pods can be created). A failed Up stops what it started and
// removes its state.
func Up(ctx context.Context, cfg Config) (_ *Sandbox, err error) {
	dir, bins, err := checkConfig(&cfg)
	if err != nil {
		return nil, err
	}
	created, err := prepareDir(dir)
	if err != nil {
		return nil, err
	}
	s := &Sandbox{State: State{Dir: dir, CreatedDir: created, Started: time.Now(), Nodes: cfg.Nodes,
		NoReadyRewrite: cfg.NoReadyRewrite}, log: cfg.Log, start: time.Now()}
	defer func() {
		if err != nil {
			s.logf("start failed; stopping what was started")
			if derr := s.Down(); derr != nil {
				err = fmt.Errorf("%w (and tearing down: %v)", err, derr)
			}
		}
	}()
	if cfg.RealNode {
		if err := ensureHostPackages(s.logf); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if err := s.startCluster(ctx, cfg, bins); err != nil {
		return nil, err
	}
	if cfg.RealNode {
		if err := s.startRealNode(ctx, cfg.BinDir); err != nil {
			return nil, err
		}
	}
	if cfg.KruiseManager != "" {
		daemon := cfg.KruiseDaemon
		if s.RealNode == nil {
			daemon = ""
		}
		if err := s.startKruise(ctx, cfg.KruiseManager, daemon); err != nil {
			return nil, err
		}
	}
	if s.RealNode != nil {
		s.logf("sandbox up: %d kwok node(s) and real node %s Ready, API server %s", cfg.Nodes, RealNodeName, s.Server())
	} else {
		s.logf("sandbox up: %d kwok node(s) Ready, API server %s", cfg.Nodes, s.Server())
	}
	return s, nil
}

// checkConfig fills in cfg's defaults and checks what Up needs before it starts anything: the
// sandbox's folder (absolute), the binaries, and for a real node the host.
func checkConfig(cfg *Config) (string, Binaries, error) {
	if cfg.Nodes < 0 {
		return "", Binaries{}, fmt.Errorf("--nodes must be >= 0, got %d", cfg.Nodes)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return "", Binaries{}, err
	}
	bins := BinariesIn(cfg.BinDir)
	if err := bins.Check(); err != nil {
		return "", Binaries{}, err
	}
	if cfg.KruiseManager != "" {
		if st, err := os.Stat(cfg.KruiseManager); err != nil || st.Mode()&0o111 == 0 {
			return "", Binaries{}, fmt.Errorf("kruise-manager binary %s is missing: run `make build`", cfg.KruiseManager)
		}
	}
	if cfg.RealNode {
		if err := checkRealNode(dir, cfg.BinDir); err != nil {
			return "", Binaries{}, err
		}
	}
	return dir, bins, nil
}

// startCluster records the sandbox's state and starts its control plane, storage and kwok nodes.
func (s *Sandbox) startCluster(ctx context.Context, cfg Config, bins Binaries) error {
	if err := s.saveState(); err != nil {
		return err
	}
	if err := s.allocatePorts(cfg.APIServerPort); err != nil {
		return err
	}
	if err := s.writeFiles(cfg.AuditLog); err != nil {
		return err
	}
	if err := s.startControlPlane(ctx, bins, cfg.AuditLog, cfg.KruiseManager != ""); err != nil {
		return err
	}
	if err := s.startStorage(ctx); err != nil {
		return err
	}
	return s.startNodes(ctx, bins)
}

// prepareDir makes sure dir is free for a new sandbox: a stopped sandbox's leftovers are removed;
// a running sandbox or foreign files in the paths a sandbox owns are an error.
func prepareDir(dir string) (created bool, err error) {
	if old, err := Load(dir); err == nil {
		if alive := old.alive(); len(alive) > 0 {
			return false, fmt.Errorf("%s is used by a running sandbox (%s); run `kruise-sandbox down --dir %s` first",
				dir, strings.Join(alive, ", "), dir)
		}
		if err := old.removeState(); err != nil {
			return false, fmt.Errorf("remove stopped sandbox in %s: %w", dir, err)
		}
		created = old.CreatedDir
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	for _, p := range ownedPaths {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			return false, fmt.Errorf("%s already exists and is not part of a sandbox; use an empty --dir",
				filepath.Join(dir, p))
		}
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		created = true
	}
	for _, d := range []string{dir, filepath.Join(dir, logsDir), filepath.Join(dir, pkiDir),
		filepath.Join(dir, configDir), filepath.Join(dir, kubeconfigsDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return false, err
		}
	}
	return created, nil
}

// allocatePorts picks distinct free loopback ports for every listener; apiPort, when not zero, is
// the API server's and must be free.
func (s *Sandbox) allocatePorts(apiPort int) error {
	ports := make([]int, 14)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for i := range ports {
		var l net.Listener
		var err error
		if i == 2 && apiPort != 0 {
			if l, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", apiPort)); err != nil {
				return fmt.Errorf("port %d for the API server is taken (%v): stop what listens there, or pick another port (0 picks a free one)", apiPort, err)
			}
		} else {
			l, err = freeport.Listen() // outside the ephemeral range: no client connection takes it meanwhile
		}
		if err != nil {
			return fmt.Errorf("find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	s.Ports = Ports{EtcdClient: ports[0], EtcdPeer: ports[1], APIServer: ports[2],
		ControllerManager: ports[3], Scheduler: ports[4], Kwok: ports[5],
		KruiseWebhook: ports[6], KruiseProbe: ports[7], KruiseMetrics: ports[8],
		Registry: ports[9], Kubelet: ports[10], KubeletHealthz: ports[11], KruisePprof: ports[12],
		KruiseDaemon: ports[13]}
	return s.saveState()
}

// Load reads the state of the sandbox in dir.
func Load(dir string) (*Sandbox, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, err
	}
	s := &Sandbox{log: io.Discard, start: time.Now()}
	if err := json.Unmarshal(data, &s.State); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, stateFile), err)
	}
	s.Dir = dir
	return s, nil
}

func (s *Sandbox) saveState() error {
	data, err := json.MarshalIndent(s.State, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.Dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.Dir, stateFile))
}

// alive lists the recorded processes that still run, as "name (pid N)".
func (s *Sandbox) alive() []string {
	var out []string
	for _, p := range s.Processes {
		if p.Alive() {
			out = append(out, fmt.Sprintf("%s (pid %d)", p.Name, p.PID))
		}
	}
	return out
}

// Down stops the sandbox's processes (newest first) and removes its state. It signals only the
// processes it recorded, identified by PID and start time.
func (s *Sandbox) Down() error {
	var errs []error
	for i := len(s.Processes) - 1; i >= 0; i-- {
		p := s.Processes[i]
		if p.Alive() {
			s.logf("stopping %s (pid %d)", p.Name, p.PID)
		}
		if err := p.Stop(15 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 && s.RealNode != nil {
		if err := s.cleanRealNode(); err != nil {
			errs = append(errs, fmt.Errorf("clean up the real node: %w", err))
		}
	}
	if len(errs) > 0 {
		// Keep the state so that a later `down` can retry.
		return errors.Join(errs...)
	}
	return s.removeState()
}

// removeState deletes everything the sandbox created under its DIR, and DIR itself if the sandbox
// created it and nothing else is left there.
func (s *Sandbox) removeState() error {
	// Never delete through a mount: a kubelet volume may expose files that are not the sandbox's.
	if mounts := MountsUnder(s.Dir); len(mounts) > 0 {
		return fmt.Errorf("not removing %s: still mounted under it: %s", s.Dir, strings.Join(mounts, ", "))
	}
	for _, p := range ownedPaths {
		if err := os.RemoveAll(filepath.Join(s.Dir, p)); err != nil {
			return err
		}
	}
	_ = os.Remove(filepath.Join(s.Dir, stateFile+".tmp"))
	if s.CreatedDir {
		if entries, err := os.ReadDir(s.Dir); err == nil && len(entries) == 0 {
			return os.Remove(s.Dir)
		}
	}
	return nil
}

// ProcessStatus is one recorded process and whether it still runs.
type ProcessStatus struct {
	Process
	Running bool
}

// Status reports the recorded processes and whether the API server answers /readyz.
func (s *Sandbox) Status(ctx context.Context) (procs []ProcessStatus, apiReady bool) {
	for _, p := range s.Processes {
		procs = append(procs, ProcessStatus{Process: *p, Running: p.Alive()})
	}
	cfg, err := s.RESTConfig()
	if err != nil {
		return procs, false
	}
	cfg.Timeout = 3 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return procs, false
	}
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return procs, err == nil && strings.TrimSpace(string(body)) == "ok"
}
