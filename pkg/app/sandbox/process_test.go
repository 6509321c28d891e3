package sandbox

import (
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
