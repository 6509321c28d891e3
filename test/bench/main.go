// Command bench measures Kruise's CloneSet against the machine on a sandbox with kwok nodes:
// scale-up, in-place rollouts at maxUnavailable 20% and 100%, the same for an Advanced
// StatefulSet, an Advanced DaemonSet's scale-up and in-place rollout at maxUnavailable 20% over N
// nodes of its own, a SidecarSet's in-place sidecar upgrade at maxUnavailable 20% over a CloneSet's
// pods, an apps/v1 Deployment rollout by kube-controller-manager as reference, and, right before
// each kind's scenarios (alone with -floor), the machine's floor: the in-place protocol's writes
// done directly, with no controller, as fast as the API server allows, every pod at once
// (floor-maxu100) and ceil(20%) of them in flight (floor-maxu20); each in-place rollout's wall
// time is also given × its floor of the same maxUnavailable measured last before it (ratio.go).
// It prints figures, not pass/fail: wall seconds, the writer's successful writes per pod (pods
// and pods/status vs everything else, from the API server's audit log, by the writer's own
// identity), 409 conflicts, the writer's CPU seconds (and per pod) and peak RSS,
// and the CPU of the API server and etcd; then what the pod webhook adds to a pod's creation (p50,
// p99) with 0, 1 and 20 SidecarSets. With -many COUNTxSIZE it measures only COUNT CloneSets of
// SIZE pods rolled in place together against one CloneSet of COUNT×SIZE pods.
//
// -profiles rewrite,no-rewrite (the default) runs the scenarios on kwok nodes whose kubelet
// rewrites a Ready False it did not compute, as a kubelet does (the in-place engine waits for that
// answer), then the in-place rollouts (and the floor) again on a second sandbox whose nodes do not
// (profiles.go), with the engine's wait for kubelets of each (kubeletwait.go).
//
//	go run ./test/bench [-n 500] [-nodes 10] [-floor] [-profiles rewrite,no-rewrite] [-many 200x25] [-json FILE] [-profile DIR]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// result is one scenario's figures; its JSON form is what BENCH_JSON collects.
type result struct {
	Scenario          string  `json:"scenario"`
	N                 int     `json:"n"`
	Nodes             int     `json:"nodes"`
	Writer            string  `json:"writer"`
	WallSeconds       float64 `json:"wall_seconds"`
	PodWritesPerPod   float64 `json:"pod_writes_per_pod"`
	OtherWritesPerPod float64 `json:"other_writes_per_pod"`
	Conflicts         int     `json:"conflicts"`
	CPUSeconds        float64 `json:"cpu_seconds"`
	// ControlPlaneCPUSeconds is the CPU of the sandbox's kube-apiserver and etcd during the
	// scenario: the control plane's share of the work, which the writer does not own.
	ControlPlaneCPUSeconds float64        `json:"control_plane_cpu_seconds"`
	PeakRSSMB              float64        `json:"peak_rss_mb"`
	Writes                 map[string]int `json:"writes"`
	Time                   time.Time      `json:"time"`
	// Profile is the kwok nodes' profile (profiles.go); KubeletWait the in-place engine's wait
	// for their kubelets during the scenario (kubeletwait.go).
	Profile     string       `json:"profile"`
	KubeletWait *kubeletWait `json:"kubelet_wait,omitempty"`
	// FloorRatio is the wall time over that of the floor of the same maxUnavailable on the same
	// profile (setFloorRatios); zero where none applies.
	FloorRatio float64 `json:"floor_ratio,omitempty"`
	// Requests (-requests) are every client's requests during the scenario by "client verb
	// resource" (requests.go).
	Requests map[string]int `json:"requests,omitempty"`
	// Phases (-phases) are the in-place protocol's steps, timed pod by pod (phases.go).
	Phases map[string]phaseStat `json:"phases,omitempty"`
}

func main() {
	n := flag.Int("n", 500, "pods per scenario")
	nodes := flag.Int("nodes", 10, "kwok nodes")
	floor := flag.Bool("floor", false, "measure the machine's floor instead of the controllers")
	jsonOut := flag.String("json", "", "append one JSON object per scenario to this file")
	profileDir := flag.String("profile", "", "write kruise-manager's CPU and allocation profiles of each scenario to this folder")
	spreadOnly := flag.Bool("spread-only", false, "measure only the pod creations under a WorkloadSpread (and without one)")
	kindNames := flag.String("kinds", "", "measure only these kinds' scenarios, comma-separated among cloneset, statefulset, daemonset, sidecarset (each scale-up and in-place rollouts, with the floor; no Deployment, webhook or spread latency)")
	flag.BoolVar(&tallyPhases, "phases", false, "also time each in-place pod's steps (the kubelet's answer, the spec write, the restart, the gate's opening, Ready again, a window's slot refilled) from the audit log, and print their p50/p90")
	flag.BoolVar(&tallyRequests, "requests", false, "also count every client's requests (reads and watches too) during each scenario, from the audit log, and print the most frequent per pod")
	flag.DurationVar(&cpuWindow, "cpu-window", cpuWindow, "with -profile: the CPU profile covers this much of each scenario's start")
	many := flag.String("many", "", "COUNTxSIZE: measure only COUNT CloneSets of SIZE pods rolled in place together against one CloneSet of COUNT×SIZE pods")
	profileNames := flag.String("profiles", "rewrite,no-rewrite", "kwok node profiles, each on a sandbox of its own: rewrite runs every scenario, no-rewrite the in-place ones (not with -many)")
	flag.Parse()
	// The bench's clients log errors only (API server warnings go to warnings).
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	if *many != "" {
		var count, size int
		if _, err := fmt.Sscanf(*many, "%dx%d", &count, &size); err != nil || count <= 0 || size <= 0 {
			fmt.Fprintf(os.Stderr, "bench: -many wants COUNTxSIZE, e.g. 200x25, got %q\n", *many)
			os.Exit(2)
		}
		scaleTimeout(count * size)
		if err := runManyIn(count, size, *nodes, *jsonOut, *profileDir); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			os.Exit(1)
		}
		return
	}
	profiles, err := parseProfiles(*profileNames)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}
	kinds, err := parseKinds(*kindNames)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}
	scaleTimeout(*n)
	set := scenarioSet{floor: *floor, spreadOnly: *spreadOnly, kinds: kinds}
	if err := run(*n, *nodes, set, profiles, *jsonOut, *profileDir); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// run runs set on a sandbox of each profile in turn.
func run(n, nodes int, set scenarioSet, profiles []sandbox.NodeProfile, jsonOut, profileDir string) error {
	if n <= 0 || nodes <= 0 {
		return fmt.Errorf("-n and -nodes must be positive")
	}
	for i, p := range profiles {
		ps := set.forProfile(p)
		if ps.nothing() {
			continue
		}
		dir := profileDir
		if dir != "" && ps.suffix != "" {
			dir = filepath.Join(dir, p.Name())
		}
		if i > 0 {
			fmt.Println()
		}
		fmt.Printf("kwok nodes of profile %s\n", p.Name())
		if err := withSandbox(nodes, p, func(sb *sandbox.Sandbox) error {
			return runIn(sb, n, nodes, ps, jsonOut, dir)
		}); err != nil {
			return err
		}
	}
	return nil
}

// withSandbox runs fn on a sandbox of nodes kwok nodes of profile and kruise-manager, torn down
// after it.
func withSandbox(nodes int, profile sandbox.NodeProfile, fn func(*sandbox.Sandbox) error) error {
	fmt.Fprintf(os.Stderr, "bench: starting a sandbox with %d kwok nodes (profile %s) and kruise-manager...\n", nodes, profile.Name())
	sb, err := harness.StartSandboxWithProfile(nodes, profile, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err := harness.Down(sb); err != nil {
			fmt.Fprintf(os.Stderr, "bench: tearing down the sandbox: %v\n", err)
		}
	}()
	return fn(sb)
}

// runIn runs set's scenarios on sb and prints their figures.
func runIn(sb *sandbox.Sandbox, n, nodes int, set scenarioSet, jsonOut, profileDir string) error {
	var err error
	ctx := context.Background()
	var results []result
	var latencies []latency
	var spread spreadLatency
	// -floor: the floor alone (otherwise each kind's scenarios measure theirs, runControllers).
	if set.floor {
		if results, err = runFloor(ctx, sb, n); err != nil {
			return err
		}
	}
	if !set.floor {
		prof := newProfiler(profileDir, sb)
		if !set.spreadOnly {
			controllers, err := runControllers(ctx, sb, n, set, prof)
			if err != nil {
				return err
			}
			results = append(results, controllers...)
		}
		if !set.spreadOnly && !set.kindsOnly() && !set.inPlaceOnly {
			if latencies, err = runWebhookLatency(ctx, sb, nodes, prof); err != nil {
				return err
			}
		}
		if !set.kindsOnly() && !set.inPlaceOnly {
			if spread, err = runSpreadLatencyIn(ctx, sb, n, prof); err != nil {
				return err
			}
			spread.Nodes, spread.Time = nodes, time.Now().UTC()
		}
	}
	results = set.label(results)
	setFloorRatios(results)
	for i := range results {
		results[i].Nodes, results[i].Time = nodes, time.Now().UTC()
	}
	for i := range latencies {
		latencies[i].Nodes, latencies[i].Time = nodes, time.Now().UTC()
	}
	if len(results) > 0 {
		printTable(results)
		fmt.Println()
		printKubeletWaits(results)
		if tallyPhases {
			fmt.Println()
			printPhases(results)
		}
		if tallyRequests {
			fmt.Println()
			printRequests(results)
		}
	}
	if len(latencies) > 0 {
		fmt.Println()
		printLatency(latencies)
	}
	if spread.Pods > 0 {
		fmt.Println()
		printSpreadLatency(spread)
	}
	if jsonOut != "" {
		if err := appendJSON(jsonOut, results); err != nil {
			return err
		}
		if err := appendJSON(jsonOut, latencies); err != nil {
			return err
		}
		if spread.Pods > 0 {
			return appendJSON(jsonOut, []spreadLatency{spread})
		}
	}
	return nil
}

// runManyIn runs runMany on a sandbox of its own and prints its figures.
func runManyIn(count, size, nodes int, jsonOut, profileDir string) error {
	return withSandbox(nodes, sandbox.NodeProfile{}, func(sb *sandbox.Sandbox) error {
		results, err := runMany(context.Background(), sb, count, size, newProfiler(profileDir, sb))
		if err != nil {
			return err
		}
		for i := range results {
			results[i].Nodes, results[i].Time = nodes, time.Now().UTC()
		}
		printTable(results)
		fmt.Printf("many CloneSets' in-place rollout / one CloneSet's: %.2f (issue 22's bar: %.1f)\n", manyRatio(results), manyMaxRatio)
		if jsonOut != "" {
			return appendJSON(jsonOut, results)
		}
		return nil
	})
}

// measure runs fn and returns its figures: wall time, the writes of users in the audit log during
// fn, the CPU and peak RSS of the process pid, and the control plane's CPU.
func measure(sb *sandbox.Sandbox, scenario, writer string, n, pid int, users func(string) bool, fn func() error) (result, error) {
	offset := harness.AuditSize(sb.AuditLog)
	// The manager's metrics are read outside its CPU's measurement.
	wait0, err := readWaitCounters(context.Background(), sb)
	if err != nil {
		return result{}, err
	}
	cpu0, err := cpuSeconds(pid)
	if err != nil {
		return result{}, err
	}
	cp0, err := controlPlaneCPU(sb)
	if err != nil {
		return result{}, err
	}
	if err := resetPeakRSS(pid); err != nil {
		return result{}, fmt.Errorf("reset peak RSS of %s: %w", writer, err)
	}
	t0 := time.Now()
	if err := fn(); err != nil {
		return result{}, fmt.Errorf("%s: %w", scenario, err)
	}
	wall := time.Since(t0).Seconds()
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		return result{}, err
	}
	rss, err := peakRSSMB(pid)
	if err != nil {
		return result{}, err
	}
	cp1, err := controlPlaneCPU(sb)
	if err != nil {
		return result{}, err
	}
	wait1, err := readWaitCounters(context.Background(), sb)
	if err != nil {
		return result{}, err
	}
	counts, err := countWrites(sb.AuditLog, offset, users)
	if err != nil {
		return result{}, err
	}
	var requests map[string]int
	if tallyRequests {
		if requests, err = tallyFrom(sb.AuditLog, offset); err != nil {
			return result{}, err
		}
	}
	var steps map[string]phaseStat
	if tallyPhases && inPlace(scenario) {
		if steps, err = phasesFrom(sb.AuditLog, offset, users, isFakeKubelet); err != nil {
			return result{}, err
		}
	}
	return result{Phases: steps, Requests: requests, Scenario: scenario, N: n, Writer: writer, WallSeconds: wall,
		PodWritesPerPod: float64(counts.PodWrites) / float64(n), OtherWritesPerPod: float64(counts.OtherWrites) / float64(n),
		Conflicts: counts.Conflicts, CPUSeconds: cpu1 - cpu0, ControlPlaneCPUSeconds: cp1 - cp0, PeakRSSMB: rss, Writes: counts.ByResource,
		Profile: sb.NodeProfile().Name(), KubeletWait: wait1.since(wait0)}, nil
}

// controlPlaneCPU is the CPU seconds the sandbox's kube-apiserver and etcd have used so far.
func controlPlaneCPU(sb *sandbox.Sandbox) (float64, error) {
	var total float64
	for _, name := range []string{"kube-apiserver", "etcd"} {
		pid, err := processPID(sb, name)
		if err != nil {
			return 0, err
		}
		s, err := cpuSeconds(pid)
		if err != nil {
			return 0, err
		}
		total += s
	}
	return total, nil
}

// warnings prints the API server's warnings once each (controller-runtime's default logs them
// through a logger the bench does not set up).
var warnings = rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true})

// processPID finds a process the sandbox started.
func processPID(sb *sandbox.Sandbox, name string) (int, error) {
	for _, p := range sb.Processes {
		if p.Name == name && p.Alive() {
			return p.PID, nil
		}
	}
	return 0, fmt.Errorf("the sandbox runs no %s", name)
}

func printTable(results []result) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tn\twall s\t× floor\tpod writes/pod\tother writes/pod\t409s\tCPU s\tCPU ms/pod\tpeak RSS MB\tAPI server+etcd CPU s\twriter\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%.2f\t%.3f\t%d\t%.1f\t%.1f\t%.0f\t%.1f\t%s\t\n", r.Scenario, r.N, r.WallSeconds, floorRatioText(r),
			r.PodWritesPerPod, r.OtherWritesPerPod, r.Conflicts, r.CPUSeconds, 1000*r.CPUSeconds/float64(r.N), r.PeakRSSMB,
			r.ControlPlaneCPUSeconds, r.Writer)
	}
	_ = tw.Flush()
	for _, r := range results {
		var parts []string
		for k, v := range r.Writes {
			parts = append(parts, fmt.Sprintf("%s=%d", k, v))
		}
		sort.Strings(parts)
		fmt.Printf("%s writes: %s\n", r.Scenario, strings.Join(parts, " "))
	}
}

func appendJSON[T any](path string, results []T) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}
