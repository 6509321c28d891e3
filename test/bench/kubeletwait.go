package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// The in-place engine's wait for kubelets (pkg/machinery/engine: await.go, kubelets.go), as
// kruise-manager's metrics tell it.
const (
	waitTimeoutsMetric = "kruise_inplace_not_ready_wait_timeouts_total"
	silentNodesMetric  = "kruise_inplace_node_kubelet_silent"
	kubeletProbeMetric = "kruise_inplace_kubelet_probes_total"
)

// kubeletWait is a scenario's figure of the engine's wait for kubelets: the pods whose wait ran
// out, the nodes counted silent before and after, and the probes (waits that told whether a
// node's kubelet answers) by result. The floor fills in its own: its timeouts and the answers'
// latency.
type kubeletWait struct {
	Timeouts       float64 `json:"not_ready_wait_timeouts"`
	SilentBefore   int     `json:"silent_nodes_before"`
	SilentAfter    int     `json:"silent_nodes_after"`
	ProbesAnswered float64 `json:"probes_answered"`
	ProbesSilent   float64 `json:"probes_silent"`
	// Floor marks the floor's own wait (no manager: no silent nodes, no probes).
	Floor bool `json:"floor,omitempty"`
	// AnswerP50Ms and AnswerP99Ms (the floor only): from a pod's Ready False written to the
	// kubelet's own, as the floor's watch saw them; Answers is how many answered.
	Answers     int     `json:"answers,omitempty"`
	AnswerP50Ms float64 `json:"answer_p50_ms,omitempty"`
	AnswerP99Ms float64 `json:"answer_p99_ms,omitempty"`
}

// waitCounters are the metrics kubeletWait is the difference of.
type waitCounters struct {
	timeouts, answered, silentProbes float64
	silent                           int
}

// readWaitCounters scrapes kruise-manager's metrics; zero without a manager.
func readWaitCounters(ctx context.Context, sb *sandbox.Sandbox) (waitCounters, error) {
	var out waitCounters
	if !sb.Kruise {
		return out, nil
	}
	families, err := managerMetrics(ctx, sb)
	if err != nil {
		return out, fmt.Errorf("kruise-manager's metrics: %w", err)
	}
	for _, m := range families[waitTimeoutsMetric].GetMetric() {
		out.timeouts += m.GetCounter().GetValue()
	}
	for _, m := range families[silentNodesMetric].GetMetric() {
		if m.GetGauge().GetValue() > 0 {
			out.silent++
		}
	}
	for _, m := range families[kubeletProbeMetric].GetMetric() {
		switch {
		case hasLabel(m, "result", "answered"):
			out.answered += m.GetCounter().GetValue()
		case hasLabel(m, "result", "silent"):
			out.silentProbes += m.GetCounter().GetValue()
		}
	}
	return out, nil
}

// since is the wait between before and w.
func (w waitCounters) since(before waitCounters) *kubeletWait {
	return &kubeletWait{Timeouts: w.timeouts - before.timeouts, SilentBefore: before.silent, SilentAfter: w.silent,
		ProbesAnswered: w.answered - before.answered, ProbesSilent: w.silentProbes - before.silentProbes}
}

// floorPrefix begins the names of the floor's scenarios (floorScenarios).
const floorPrefix = "floor-"

// inPlace reports whether scenario is an in-place rollout (the scenarios run on every profile).
func inPlace(scenario string) bool {
	base, _, _ := strings.Cut(scenario, "/")
	return strings.Contains(base, "inplace") || base == "sidecarset-upgrade" || strings.HasPrefix(base, floorPrefix)
}

// printKubeletWaits prints the engine's wait of each in-place scenario.
func printKubeletWaits(results []result) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "in-place scenario\tnodes' profile\twall s\tnot-Ready wait timeouts\tsilent nodes before→after\tprobes answered/silent\tkubelet answer p50/p99 ms\t")
	for _, r := range results {
		w := r.KubeletWait
		if w == nil || !inPlace(r.Scenario) {
			continue
		}
		answer := "-"
		if w.Answers > 0 {
			answer = fmt.Sprintf("%.0f/%.0f", w.AnswerP50Ms, w.AnswerP99Ms)
		}
		silent, probes := fmt.Sprintf("%d→%d", w.SilentBefore, w.SilentAfter), fmt.Sprintf("%.0f/%.0f", w.ProbesAnswered, w.ProbesSilent)
		if w.Floor {
			silent, probes = "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.0f\t%s\t%s\t%s\t\n", r.Scenario, r.Profile, r.WallSeconds, w.Timeouts, silent, probes, answer)
	}
	_ = tw.Flush()
}
