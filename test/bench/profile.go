package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// profiler fetches kruise-manager's profiles during a scenario (-profile DIR): a CPU profile of the
// first cpuWindow of the scenario (-cpu-window), the allocation profile before and after it (compare them with
// `go tool pprof -diff_base before after`), and the heap profile in text with the runtime's memory
// statistics at its end (where the resident memory goes); and the heap profile taken when the live heap was
// largest, with the goroutines at that moment: what holds the peak, and who was busy. The GC's goal (twice the
// heap live at the last collection) is read from the manager's metrics every peakEvery, and the profiles are
// fetched only when it grew by a twentieth: symbolizing a heap profile costs the manager CPU the scenario counts.
// It also writes how many reconciles each controller ran during the scenario, by result.
type profiler struct {
	dir  string
	port int
	sb   *sandbox.Sandbox // scrapes the manager's metrics
}

var cpuWindow = 15 * time.Second

func newProfiler(dir string, sb *sandbox.Sandbox) *profiler {
	if dir == "" || sb.Ports.KruisePprof == 0 {
		return nil
	}
	return &profiler{dir: dir, port: sb.Ports.KruisePprof, sb: sb}
}

// start begins profiling scenario; the returned function waits for the profiles to be written.
func (p *profiler) start(scenario string) func() error {
	if p == nil {
		return func() error { return nil }
	}
	if err := p.fetch("allocs", filepath.Join(p.dir, scenario+".allocs-before.pprof")); err != nil {
		return func() error { return err }
	}
	before, err := p.reconciles()
	if err != nil {
		return func() error { return err }
	}
	cpu := make(chan error, 1)
	go func() {
		cpu <- p.fetch(fmt.Sprintf("profile?seconds=%d", int(cpuWindow.Seconds())), filepath.Join(p.dir, scenario+".cpu.pprof"))
	}()
	done, peak := make(chan struct{}), make(chan error, 1)
	go func() { peak <- p.samplePeak(scenario, done) }()
	return func() error {
		close(done)
		if err := <-peak; err != nil {
			return err
		}
		if err := p.fetch("allocs", filepath.Join(p.dir, scenario+".allocs-after.pprof")); err != nil {
			return err
		}
		after, err := p.reconciles()
		if err != nil {
			return err
		}
		if err := writeReconciles(filepath.Join(p.dir, scenario+".reconciles.txt"), before, after); err != nil {
			return err
		}
		if err := p.fetch("heap?debug=1", filepath.Join(p.dir, scenario+".heap.txt")); err != nil {
			return err
		}
		return <-cpu
	}
}

var peakEvery = time.Second

// samplePeak keeps, until done, the heap profile with the largest GC goal and the goroutines seen with it.
func (p *profiler) samplePeak(scenario string, done <-chan struct{}) error {
	var best float64
	tick := time.NewTicker(peakEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-tick.C:
		}
		goal, err := p.gcGoal()
		if err != nil {
			return err
		}
		if goal <= best*1.05 {
			continue
		}
		best = goal
		for what, name := range map[string]string{"heap?debug=1": ".heap-peak.txt", "goroutine?debug=1": ".goroutines-peak.txt"} {
			if err := p.fetch(what, filepath.Join(p.dir, scenario+name)); err != nil {
				return err
			}
		}
	}
}

// gcGoal is the manager's go_memstats_next_gc_bytes.
func (p *profiler) gcGoal() (float64, error) {
	families, err := managerMetrics(context.Background(), p.sb)
	if err != nil {
		return 0, fmt.Errorf("metrics: %w", err)
	}
	f := families["go_memstats_next_gc_bytes"]
	if f == nil || len(f.GetMetric()) == 0 {
		return 0, errors.New("metrics: no go_memstats_next_gc_bytes")
	}
	return f.GetMetric()[0].GetGauge().GetValue(), nil
}

// reconciles are the manager's controller_runtime_reconcile_total by controller and result, and
// by controller the sums and counts of its reconciles' times and its work queue's: how long a key
// waited in the queue (workqueue_queue_duration_seconds) and was worked on
// (workqueue_work_duration_seconds).
func (p *profiler) reconciles() (map[string]float64, error) {
	families, err := managerMetrics(context.Background(), p.sb)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	out := map[string]float64{}
	for _, m := range families["controller_runtime_reconcile_total"].GetMetric() {
		out[labelOf(m, "controller")+" "+labelOf(m, "result")] += m.GetCounter().GetValue()
	}
	for family, label := range map[string]string{"controller_runtime_reconcile_time_seconds": "controller",
		"workqueue_queue_duration_seconds": "name", "workqueue_work_duration_seconds": "name"} {
		for _, m := range families[family].GetMetric() {
			h := m.GetHistogram()
			out[labelOf(m, label)+" "+family+" sum"] += h.GetSampleSum()
			out[labelOf(m, label)+" "+family+" count"] += float64(h.GetSampleCount())
		}
	}
	return out, nil
}

// writeReconciles writes the reconciles each controller ran between before and after, by result,
// and the mean of each time it measures (its sum over its count), in ms.
func writeReconciles(path string, before, after map[string]float64) error {
	keys := slices.Sorted(maps.Keys(after))
	var b strings.Builder
	for _, k := range keys {
		d := after[k] - before[k]
		if d <= 0 {
			continue
		}
		if base, ok := strings.CutSuffix(k, " count"); ok {
			fmt.Fprintf(&b, "%s mean_ms %.1f (%.0f)\n", base, 1000*(after[base+" sum"]-before[base+" sum"])/d, d)
			continue
		}
		if !strings.HasSuffix(k, " sum") {
			fmt.Fprintf(&b, "%s %.0f\n", k, d)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func (p *profiler) get(what string) ([]byte, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/%s", p.port, what))
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("profile %s: %s", what, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

func (p *profiler) fetch(what, path string) error {
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	body, err := p.get(what)
	if err != nil {
		return err
	}
	return os.WriteFile(path, body, 0o644)
}
