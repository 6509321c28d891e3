package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/kruise-ng/kruise/pkg/sandbox"
)

// profiler fetches kruise-manager's profiles during a scenario (-profile DIR): a CPU profile of the
// first cpuWindow of the scenario (-cpu-window), the allocation profile before and after it (compare them with
// `go tool pprof -diff_base before after`), and the heap profile in text with the runtime's memory
// statistics at its end (where the resident memory goes).
type profiler struct {
	dir  string
	port int
}

var cpuWindow = 15 * time.Second

func newProfiler(dir string, sb *sandbox.Sandbox) *profiler {
	if dir == "" || sb.Ports.KruisePprof == 0 {
		return nil
	}
	return &profiler{dir: dir, port: sb.Ports.KruisePprof}
}

// start begins profiling scenario; the returned function waits for the profiles to be written.
func (p *profiler) start(scenario string) func() error {
	if p == nil {
		return func() error { return nil }
	}
	if err := p.fetch("allocs", filepath.Join(p.dir, scenario+".allocs-before.pprof")); err != nil {
		return func() error { return err }
	}
	cpu := make(chan error, 1)
	go func() {
		cpu <- p.fetch(fmt.Sprintf("profile?seconds=%d", int(cpuWindow.Seconds())), filepath.Join(p.dir, scenario+".cpu.pprof"))
	}()
	return func() error {
		if err := p.fetch("allocs", filepath.Join(p.dir, scenario+".allocs-after.pprof")); err != nil {
			return err
		}
		if err := p.fetch("heap?debug=1", filepath.Join(p.dir, scenario+".heap.txt")); err != nil {
			return err
		}
		return <-cpu
	}
}

func (p *profiler) fetch(what, path string) error {
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/%s", p.port, what))
	if err != nil {
		return fmt.Errorf("profile %s: %w", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", what, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
