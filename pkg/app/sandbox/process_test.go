package sandbox

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProcessIdentityAndStop(t *testing.T) {
	dir := t.TempDir()
	p, err := startProcess(Process{Name: "sleeper", Binary: "/bin/sleep", Args: []string{"60"}, Log: filepath.Join(dir, "sleeper.log")})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatal("started process is not alive")
	}
	// A recorded process with the same PID but another start time is a different process: it must
	// never be reported alive, so that Stop never signals it.
	impostor := *p
	impostor.StartTime++
	if impostor.Alive() {
		t.Fatal("a recycled PID was taken for the recorded process")
	}
	if err := impostor.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatal("Stop signalled a process whose identity did not match")
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Alive() {
		t.Fatal("process still alive after Stop")
	}
}

func TestPrepareDirRefusesForeignFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, etcdDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := prepareDir(dir); err == nil {
		t.Fatal("a folder holding someone else's etcd/ was accepted")
	}
}

func TestPrepareDirRefusesARunningSandbox(t *testing.T) {
	dir := t.TempDir()
	p, err := startProcess(Process{Name: "sleeper", Binary: "/bin/sleep", Args: []string{"60"}, Log: filepath.Join(dir, "sleeper.log")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Stop(time.Second) }()
	s := &Sandbox{State: State{Dir: dir, Processes: []*Process{p}}}
	if err := s.saveState(); err != nil {
		t.Fatal(err)
	}
	if _, err := prepareDir(dir); err == nil {
		t.Fatal("a folder of a running sandbox was reused")
	}
	if !p.Alive() {
		t.Fatal("the running sandbox's process was touched")
	}
	// Once its processes are gone, the stopped sandbox's state is cleaned and the folder reused.
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := prepareDir(dir); err != nil {
		t.Fatalf("a stopped sandbox's folder was not reusable: %v", err)
	}
}

func TestFindRepoRoot(t *testing.T) {
	root, ok := FindRepoRoot(".")
	if !ok {
		t.Fatal("repository root not found from pkg/app/sandbox")
	}
	if _, err := os.Stat(filepath.Join(root, "pkg", "app", "sandbox", "doc.go")); err != nil {
		t.Fatalf("root %s does not hold pkg/app/sandbox: %v", root, err)
	}
	if _, ok := FindRepoRoot(t.TempDir()); ok {
		t.Fatal("a repository root was found outside any checkout")
	}
}

func TestMissingBinariesSayMakeTools(t *testing.T) {
	err := BinariesIn(t.TempDir()).Check()
	if err == nil || !strings.Contains(err.Error(), "make tools") {
		t.Fatalf("error = %v; want it to say `make tools`", err)
	}
}

// A restarted process that exits at once because its port is taken (a client's connection held
// it for a moment) is started again; one that fails otherwise is not, even when an earlier start
// in the same log found its port taken.
func TestRestartRetriesATakenPort(t *testing.T) {
	dir := t.TempDir()
	tried, running := filepath.Join(dir, "tried"), filepath.Join(dir, "running")
	// The first start fails as a listener on a taken port does; the next one runs.
	script := `if [ ! -e ` + tried + ` ]; then touch ` + tried + `; echo "listen tcp 127.0.0.1:1: bind: address already in use"; exit 1; fi; ` +
		`touch ` + running + `; exec sleep 60`
	old, err := startProcess(Process{Name: "server", Binary: "/bin/sh", Args: []string{"-c", "exec sleep 60"}, Log: filepath.Join(dir, "server.log")})
	if err != nil {
		t.Fatal(err)
	}
	s := &Sandbox{State: State{Dir: dir, Processes: []*Process{old}}, log: io.Discard}
	t.Cleanup(func() {
		for _, p := range s.Processes {
			_ = p.Kill()
		}
	})
	ready := func(ctx context.Context) error {
		return s.waitFor(ctx, "server up", func(context.Context) (bool, error) { return fileExists(running), nil })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args := func([]string) []string { return []string{"-c", script} }
	if err := s.restartProcess(ctx, "server", "killed", (*Process).Kill, args, ready); err != nil {
		t.Fatalf("a start that found its port taken was not retried: %v", err)
	}
	if !s.Processes[0].Alive() {
		t.Fatal("the retried process does not run")
	}
	if err := os.Remove(running); err != nil {
		t.Fatal(err)
	}
	// Any other failure is returned at once.
	t0 := time.Now()
	fail := func([]string) []string { return []string{"-c", "echo boom; exit 1"} }
	if err := s.restartProcess(ctx, "server", "killed", (*Process).Kill, fail, ready); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("a process that exits for another reason: %v, want its failure", err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("a failure that is no taken port was retried (%s)", d)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// kwok's crash in its own race at start (a CI run's log, its last lines) and a taken port are told
// from other exits: only those are started again.
func TestStartsAgainOnPassingExits(t *testing.T) {
	crash := `sigs.k8s.io/kwok/pkg/utils/lifecycle.(*Stage).init(0x120b963f6a80, 0x120b967c4c90)
	sigs.k8s.io/kwok@v0.8.0/pkg/utils/lifecycle/lifecycle.go:215 +0x31b
sigs.k8s.io/kwok/pkg/utils/lifecycle.(*Stage).match(0x120b963f6a80, {0x284bac8, 0x120b9673a9c0}, 0x120b967c4c90)
	sigs.k8s.io/kwok@v0.8.0/pkg/utils/lifecycle/lifecycle.go:374 +0x3a`
	for _, passing := range []string{crash, "listen tcp 127.0.0.1:1: bind: address already in use"} {
		if !startsAgain(passing) {
			t.Errorf("%q is not started again", passing)
		}
	}
	for _, other := range []string{`error: unknown flag: --bogus`, "panic: runtime error: index out of range", ""} {
		if startsAgain(other) {
			t.Errorf("%q is started again", other)
		}
	}
}
