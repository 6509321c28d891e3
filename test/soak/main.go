// Command soak is Kruise's fault campaign: on a sandbox with kwok nodes it runs a world of
// workloads (world.go) that a driver keeps changing (driver.go) while an injector kills, freezes
// and restarts the control plane's processes and slows, drops or lags kruise-manager's links
// (faults.go), and a checker holds every invariant (checks.go) on the true objects as a watch
// delivers them. After DURATION the driver gives every workload its final spec, and each must
// converge to it within a bound. Everything random comes from SEED: a failing seed is kept and run
// again.
//
//	go run ./test/soak [-duration 30m] [-seed N] [-nodes 4]
//
// Its last line: `soak: F faults, O operations, C checks, V violations, converged p99 T s`; it
// exits 1 when V > 0 (or a fault could not be caused, or a component did not come back).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

func main() {
	duration := flag.Duration("duration", 30*time.Minute, "how long the driver and the injector run")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()%1_000_000), "the campaign's seed (printed; run it again with the same)")
	nodes := flag.Int("nodes", 4, "kwok nodes")
	bound := flag.Duration("converge-bound", 3*time.Minute, "how long each workload may take to converge after the last fault")
	flag.Parse()
	fmt.Printf("soak: seed %d, %s, %d kwok nodes (rerun: go run ./test/soak -duration %s -seed %d)\n", *seed, *duration, *nodes, *duration, *seed)
	sb, err := harness.StartSandbox(*nodes, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	rep, err := run(sb, *seed, *duration, *bound)
	if err != nil || rep.failed() {
		keepLogs(sb, *seed)
	}
	if derr := harness.Down(sb); derr != nil {
		fmt.Fprintln(os.Stderr, "soak: stop the sandbox:", derr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	rep.print(os.Stdout)
	if rep.failed() {
		os.Exit(1)
	}
}

// run sets the world up on sb and runs the campaign.
func run(sb *sandbox.Sandbox, seed uint64, duration, bound time.Duration) (*report, error) {
	ctx := context.Background()
	cfg, err := sb.RESTConfig()
	if err != nil {
		return nil, err
	}
	// The webhook and cache faults act on the manager's fronts.
	fronts, err := sb.FrontKruiseManager(ctx)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 50, 100
	cs := kubernetes.NewForConfigOrDie(cfg)
	c, err := harness.NewKruiseClient(cfg)
	if err != nil {
		return nil, err
	}
	nodeNames, err := kwokNodes(ctx, cs)
	if err != nil {
		return nil, err
	}
	if err := labelZones(ctx, cs, nodeNames); err != nil {
		return nil, err
	}
	if err := create(ctx, c); err != nil {
		return nil, err
	}
	log := &eventLog{}
	versions := map[string]int{}
	for _, w := range world {
		versions[w.Name] = 1
	}
	if _, err := converge(ctx, targets(c, cs, versions, nodeNames, nil), bound); err != nil {
		return nil, fmt.Errorf("the world did not start: %w", err)
	}
	evicted := &sync.Map{}
	history := newReplicaHistory(time.Now())
	checkCtx, stopChecks := context.WithCancel(ctx)
	defer stopChecks()
	asked := newAsks()
	ch, err := newChecker(checkCtx, cs, c, history, evicted, asked)
	if err != nil {
		return nil, err
	}
	d := newDriver(c, cs, seed, nodeNames, evicted, asked, history, log)
	in := newInjector(sb, fronts, seed, log)
	campaign, stop := context.WithTimeout(ctx, duration)
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() { d.run(campaign) })
	wg.Go(func() { in.run(campaign) })
	wg.Wait()
	in.revive(ctx) // a manager that exited at the very end

	rep := &report{seed: seed, duration: duration, faults: in.counts, faultFailures: in.failures, revived: in.revived, ops: d.ops, log: log}
	// Once the injector is done (one restarter of the sandbox's processes at a time): a stuck
	// orphaning is the garbage collector's to undo.
	d.restartGC = sb.RestartControllerManager
	if err := d.settle(ctx); err != nil {
		ch.violate(checkConverge, "%v", err)
	}
	settled := time.Now()
	ts := targets(c, cs, d.versions, nodeNames, d.released)
	times, err := converge(ctx, ts, bound)
	if err != nil {
		ch.violate(checkConverge, "%v", err)
	}
	ch.checks.Add(int64(len(ts)))
	since := settled.Sub(in.lastEnd)
	if in.lastEnd.IsZero() {
		since = 0
	}
	for _, t := range times {
		rep.converged = append(rep.converged, t+since)
	}
	rep.checks, rep.violations, rep.events = ch.checks.Load(), ch.violations(), &ch.events
	rep.addWriters(sb.AuditLog)
	return rep, nil
}

// keepLogs copies the sandbox's logs (its processes' and the API server's audit log) out of it
// before it is removed, for a failed campaign.
func keepLogs(sb *sandbox.Sandbox, seed uint64) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("kruise-soak-%d-", seed))
	if err == nil {
		err = os.CopyFS(dir, os.DirFS(filepath.Join(sb.Dir, "logs")))
	}
	if err == nil && sb.AuditLog != "" {
		if data, rerr := os.ReadFile(sb.AuditLog); rerr == nil {
			err = os.WriteFile(filepath.Join(dir, "audit.log"), data, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak: keep the logs:", err)
		return
	}
	fmt.Printf("soak: the sandbox's logs are kept in %s\n", dir)
}
