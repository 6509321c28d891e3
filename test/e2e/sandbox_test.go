package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kruise-ng/kruise/pkg/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// A second sandbox runs beside the first (every listener on its own port), refuses to be started
// twice in the same folder, and `down` leaves no process and no state behind.
func TestSecondSandboxAndCleanDown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "second")
	second, err := sandbox.Up(context.Background(), sandbox.Config{Dir: dir, Nodes: 1, BinDir: harness.BinDir(), Log: os.Stderr})
	if err != nil {
		t.Fatalf("a second sandbox did not start beside the first: %v", err)
	}
	downed := false
	defer func() {
		if !downed {
			_ = second.Down()
		}
	}()
	if second.Ports == sb.Ports {
		t.Fatalf("two sandboxes share ports: %+v", second.Ports)
	}
	procs, ready := second.Status(context.Background())
	if !ready || len(procs) != 5 {
		t.Fatalf("status: API ready=%v, %d processes; want ready and 5 (etcd, apiserver, kcm, scheduler, kwok)", ready, len(procs))
	}

	_, err = sandbox.Up(context.Background(), sandbox.Config{Dir: dir, Nodes: 1, BinDir: harness.BinDir()})
	if err == nil || !strings.Contains(err.Error(), "used by a running sandbox") {
		t.Fatalf("starting a sandbox in a folder in use: err = %v; want a refusal", err)
	}
	if _, ready := second.Status(context.Background()); !ready {
		t.Fatal("the refused start disturbed the running sandbox")
	}

	if err := second.Down(); err != nil {
		t.Fatal(err)
	}
	downed = true
	for _, p := range procs {
		if p.Alive() {
			t.Errorf("%s (pid %d) still runs after down", p.Name, p.PID)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sandbox folder %s left behind after down (stat err %v)", dir, err)
	}
	if _, ready := sb.Status(context.Background()); !ready {
		t.Error("stopping the second sandbox disturbed the first")
	}
}
