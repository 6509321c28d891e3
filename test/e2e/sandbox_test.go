package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
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
	if !ready || len(procs) != 6 {
		t.Fatalf("status: API ready=%v, %d processes; want ready and 6 (etcd, apiserver, kcm, scheduler, storage provisioner, kwok)", ready, len(procs))
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

// A start that fails part-way (here: kwok exits at once) reports why, with the component's own
// output, and stops every process it had started and removes its state.
func TestFailedStartTearsDown(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		if err := os.Symlink(filepath.Join(harness.BinDir(), name), filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	broken := "#!/bin/sh\necho 'kwok: cannot start: simulated failure' >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "kwok"), []byte(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "broken")
	var progress strings.Builder
	_, err := sandbox.Up(context.Background(), sandbox.Config{Dir: dir, Nodes: 1, BinDir: bin, Log: &progress})
	if err == nil {
		t.Fatal("a sandbox whose kwok cannot start came up")
	}
	if !strings.Contains(err.Error(), "kwok exited") || !strings.Contains(err.Error(), "simulated failure") {
		t.Errorf("error does not say which component failed and why: %v", err)
	}
	if _, statErr := os.Stat(dir); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("failed start left %s behind", dir)
	}
	// Every process the failed start launched is gone: the progress log names them with their PIDs.
	for _, line := range strings.Split(progress.String(), "\n") {
		var name string
		var pid int
		if i := strings.Index(line, "started "); i >= 0 {
			if _, err := fmt.Sscanf(line[i:], "started %s (pid %d)", &name, &pid); err == nil {
				if syscall.Kill(pid, 0) == nil && !isZombie(pid) {
					t.Errorf("%s (pid %d) still runs after the failed start", name, pid)
				}
			}
		}
	}
}

func isZombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(data), ')')
	return i > 0 && i+2 < len(data) && data[i+2] == 'Z'
}
