package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// runDemo runs `kruise-sandbox demo` (built from this checkout, with kruise-manager beside it) in
// dir with args and returns its output and exit code.
func runDemo(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	bin, err := harness.BuildCommand("kruise-sandbox")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := harness.BuildManager(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"demo", "--dir", dir, "--bin-dir", harness.BinDir()}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("run the demo: %v\n%s", err, out.String())
	}
	return out.String(), 0
}

// make demo's program: a sandbox comes up, the CloneSet rolls v1 → v2 in place with a canary
// batch first, the summary says 0 recreated, and the cluster stays up for kubectl kruise.
func TestDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	out, code := runDemo(t, dir, "--replicas", "20", "--canary", "2", "--canary-check", "1s")
	sb, err := sandbox.Load(dir)
	if err == nil {
		t.Cleanup(func() {
			if err := sb.Down(); err != nil {
				t.Error(err)
			}
		})
	}
	if code != 0 {
		t.Fatalf("demo exited %d:\n%s", code, out)
	}
	t.Logf("demo output:\n%s", out)
	for _, want := range []string{
		"canary: 2 pod(s), partition 18",
		"Canary healthy: 2 pod(s) on demo:v2 and Ready",
		"Rolled out demo:v1 → demo:v2: 20 of 20 pods updated in place, 0 recreated.",
		"container restarts                      20 (one per pod",
		"export KUBECONFIG=" + sb.Kubeconfig(),
		"kubectl kruise rollout status clone/demo",
		"make sandbox-down SANDBOX_DIR=" + dir,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	// The progress table shows the rest rolling: a row of the rollout phase with fewer than 20
	// pods updated (more than the canary's 2), and a last row with all 20.
	rows := regexp.MustCompile(`(?m)^rollout\s+\[[#.]+\]\s+\d+%\s+(\d+)/20 `).FindAllStringSubmatch(out, -1)
	partial := false
	for _, r := range rows {
		partial = partial || (r[1] != "20" && r[1] != "2")
	}
	if !partial || len(rows) == 0 || rows[len(rows)-1][1] != "20" {
		t.Errorf("the progress table does not show the rollout moving (rows %v)", rows)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, ready := sb.Status(ctx); !ready {
		t.Fatal("the demo's API server is not ready after the demo")
	}
	plugin, err := harness.BuildCommand("kubectl-kruise")
	if err != nil {
		t.Fatal(err)
	}
	status, err := exec.Command(plugin, "--kubeconfig", sb.Kubeconfig(), "rollout", "status", "clone/demo").CombinedOutput()
	if err != nil || !strings.Contains(string(status), `cloneset "demo" successfully rolled out`) {
		t.Fatalf("kubectl kruise rollout status on the demo: %v\n%s", err, status)
	}
}

// Bad input ends the demo with a clear message and leaves no sandbox behind: an API server port
// that is taken, and a CloneSet the webhook refuses (after the sandbox started).
func TestDemoBadInput(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"port taken", []string{"--api-port", fmt.Sprint(port)},
			[]string{fmt.Sprintf("port %d for the API server is taken", port)}},
		{"invalid maxUnavailable", []string{"--max-unavailable", "0%"},
			[]string{"spec.updateStrategy.maxUnavailable", "was torn down"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "demo")
			out, code := runDemo(t, dir, tc.args...)
			if code != 1 {
				t.Fatalf("demo exited %d, want 1:\n%s", code, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("demo output lacks %q:\n%s", want, out)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "sandbox.json")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a sandbox is left in %s (%v)", dir, err)
			}
			if pids := regexp.MustCompile(`started \S+ \(pid (\d+)\)`).FindAllStringSubmatch(out, -1); len(pids) > 0 {
				for _, m := range pids {
					if _, err := os.Stat("/proc/" + m[1]); err == nil {
						t.Errorf("process %s the demo started still runs", m[1])
					}
				}
			}
		})
	}
}
