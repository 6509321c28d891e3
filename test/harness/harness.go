// Package harness gives tests real Kubernetes components: an API server with etcd (envtest driving
// the binaries of `make tools`) for integration tests, and a full sandbox (control plane plus kwok
// nodes) for end-to-end tests. Missing binaries are an error that says to run `make tools`: tests
// never skip silently because the tools are absent.
package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// RepoRoot is the folder of the Kruise checkout these tests belong to.
func RepoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("harness: cannot locate source file")
	}
	root, found := sandbox.FindRepoRoot(filepath.Dir(file))
	if !found {
		panic("harness: no go.mod of " + sandbox.ModulePath + " above " + file)
	}
	return root
}

// BinDir is where the cluster binaries are: $KRUISE_BIN_DIR, else bin/k8s of the checkout.
func BinDir() string {
	if d := os.Getenv("KRUISE_BIN_DIR"); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(), "bin", "k8s")
}

// CRDDir holds the CRDs that `make generate` writes; loaded into every test API server.
func CRDDir() string { return filepath.Join(RepoRoot(), "config", "crd", "bases") }

// requireBinaries fails (it does not skip) when a binary is missing.
func requireBinaries(names ...string) error {
	for _, n := range names {
		p := filepath.Join(BinDir(), n)
		if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
			return fmt.Errorf("%s is missing: run `make tools` first (it builds the pinned Kubernetes binaries into bin/)", p)
		}
	}
	return nil
}

// APIServer is a real kube-apiserver backed by a real etcd.
type APIServer struct {
	// Config is an admin client configuration.
	Config *rest.Config
	env    *envtest.Environment
}

// StartAPIServer starts etcd and kube-apiserver with the CRDs of config/crd/bases installed.
func StartAPIServer() (*APIServer, error) { return StartAPIServerWithCRDs(CRDDir()) }

// StartAPIServerWithCRDs starts etcd and kube-apiserver with the CRDs found in crdDir installed.
func StartAPIServerWithCRDs(crdDir string) (*APIServer, error) {
	if err := requireBinaries("etcd", "kube-apiserver"); err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: BinDir(),
		CRDDirectoryPaths:     []string{crdDir},
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start kube-apiserver and etcd from %s: %w", BinDir(), err)
	}
	return &APIServer{Config: cfg, env: env}, nil
}

// ConfigFor returns a client configuration that authenticates as user in groups, so that a test
// exercises that user's RBAC instead of an administrator's.
func (a *APIServer) ConfigFor(user string, groups ...string) (*rest.Config, error) {
	u, err := a.env.AddUser(envtest.User{Name: user, Groups: groups}, a.Config)
	if err != nil {
		return nil, err
	}
	return u.Config(), nil
}

// Stop stops the API server and etcd and removes their data.
func (a *APIServer) Stop() error { return a.env.Stop() }

// BuildManager builds kruise-manager from this checkout into bin/ and returns its path, so tests
// always run the code under test.
func BuildManager() (string, error) { return BuildCommand("kruise-manager") }

// builds are the commands built by this test process: each is built once, so tests running in
// parallel never write a binary another is running.
var builds sync.Map // name → func() (string, error)

// BuildCommand builds cmd/NAME from this checkout into bin/NAME, once per test process, and
// returns its path.
func BuildCommand(name string) (string, error) {
	build, _ := builds.LoadOrStore(name, sync.OnceValues(func() (string, error) {
		out := filepath.Join(RepoRoot(), "bin", name)
		cmd := exec.Command("go", "build", "-o", out, "./cmd/"+name)
		cmd.Dir = RepoRoot()
		if msg, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build %s: %v\n%s", name, err, msg)
		}
		return out, nil
	}))
	return build.(func() (string, error))()
}

// StartSandbox starts a sandbox with the given number of kwok nodes, and kruise-manager built from
// this checkout, in a fresh temporary folder; progress goes to log (nil discards it). Stop it with
// Down.
func StartSandbox(nodes int, log io.Writer) (*sandbox.Sandbox, error) {
	return StartSandboxWithProfile(nodes, sandbox.NodeProfile{}, log)
}

// StartSandboxWithProfile is StartSandbox whose kwok nodes behave as profile says (a kubelet that
// does not rewrite a Ready it did not compute: NodeProfile.NoReadyRewrite).
func StartSandboxWithProfile(nodes int, profile sandbox.NodeProfile, log io.Writer) (*sandbox.Sandbox, error) {
	managerBin, err := BuildManager()
	if err != nil {
		return nil, err
	}
	return startKwokSandbox(nodes, profile, log, managerBin)
}

// StartSandboxWithoutKruise is StartSandbox without Kruise: objects of any kind (Kruise's CRDs
// installed with Sandbox.InstallCRDs) can be loaded before kruise-manager starts
// (Sandbox.StartKruise), as on a cluster taken over from OpenKruise.
func StartSandboxWithoutKruise(nodes int, log io.Writer) (*sandbox.Sandbox, error) {
	return startKwokSandbox(nodes, sandbox.NodeProfile{}, log, "")
}

// startKwokSandbox starts a sandbox of kwok nodes of profile, with kruise-manager when managerBin
// is set.
func startKwokSandbox(nodes int, profile sandbox.NodeProfile, log io.Writer, managerBin string) (*sandbox.Sandbox, error) {
	if err := requireBinaries("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kruise-e2e-")
	if err != nil {
		return nil, err
	}
	sb, err := sandbox.Up(context.Background(), sandbox.Config{
		Dir: filepath.Join(dir, "sandbox"), Nodes: nodes, BinDir: BinDir(), Log: log, AuditLog: true, KruiseManager: managerBin,
		NoReadyRewrite: profile.NoReadyRewrite,
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return sb, nil
}

// StartRealNodeSandbox starts a sandbox with the real node (registry, containerd, kubelet), the
// given number of kwok nodes and, when kruise is set, kruise-manager and kruise-daemon (for the real
// node) built from this checkout, in a
// fresh temporary folder. It fails, saying why, when the machine cannot run a real node: node tests
// never pass by doing nothing.
func StartRealNodeSandbox(nodes int, kruise bool, log io.Writer) (*sandbox.Sandbox, error) {
	var managerBin, daemonBin string
	if kruise {
		var err error
		if managerBin, err = BuildManager(); err != nil {
			return nil, err
		}
		if daemonBin, err = BuildCommand("kruise-daemon"); err != nil {
			return nil, err
		}
	}
	if err := requireBinaries("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok",
		"kubelet", "containerd", "containerd-shim-runc-v2", "registry"); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kruise-node-")
	if err != nil {
		return nil, err
	}
	sb, err := sandbox.Up(context.Background(), sandbox.Config{
		Dir: filepath.Join(dir, "sandbox"), Nodes: nodes, BinDir: BinDir(), Log: log, RealNode: true, AuditLog: true,
		KruiseManager: managerBin, KruiseDaemon: daemonBin, Timeout: 3 * time.Minute,
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return sb, nil
}

// Down stops a sandbox started by StartSandbox and removes its temporary folder.
func Down(sb *sandbox.Sandbox) error {
	if err := sb.Down(); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Dir(sb.Dir))
}

// Main runs a test binary around a shared fixture: setup runs once before the tests, and its
// teardown after them, even when tests fail. A setup error fails the whole package loudly.
func Main(m *testing.M, setup func() (teardown func() error, err error)) {
	// In-process controllers (the manager in integration tests) log errors only.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	teardown, err := setup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "test setup failed: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := teardown(); err != nil {
		fmt.Fprintf(os.Stderr, "test teardown failed: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
