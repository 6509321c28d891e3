package main

import (
	"fmt"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// tallyPhases (-phases): each in-place scenario also times the protocol's steps pod by pod, from
// the order of the pod's writes in the audit log, for the floor and the controllers alike: where
// a rollout's time beyond its floor goes.
var tallyPhases bool

// The steps of one pod's in-place update, between its writes: the writer's (the controller or the
// floor) and the fake kubelet's (kwok), in the order the protocol makes them.
const (
	phaseAnswer  = "answer"  // take-out (the writer's first status write) → the kubelet's next status write
	phaseWrite   = "write"   // the kubelet's answer → the writer's spec write
	phaseRestart = "restart" // the spec write → the kubelet's last status write before the gate opens
	phaseOpen    = "open"    // that status write → the writer's gate opening (its next status write)
	phaseReady   = "ready"   // the gate opening → the kubelet's next status write (Ready again)
	// phaseSlot: under a window (maxUnavailable below 100%), a pod's Ready again → the take-out
	// it makes room for: the k-th take-out after the first window follows the k-th Ready.
	phaseSlot = "slot"
)

var phaseOrder = []string{phaseAnswer, phaseWrite, phaseRestart, phaseOpen, phaseReady, phaseSlot}

// phaseStat is one step's times over a scenario's pods.
type phaseStat struct {
	Pods  int     `json:"pods"`
	P50Ms float64 `json:"p50_ms"`
	P90Ms float64 `json:"p90_ms"`
}

// podWrite is one write to a pod: by the writer (spec or status) or by its kubelet.
type podWrite struct {
	at      time.Time
	kubelet bool
	status  bool
}

// phasesFrom times the steps of the in-place updates in the audit log from offset: writer matches
// the writer's user, kubelet the fake kubelet's.
func phasesFrom(path string, offset int64, writer, kubelet func(string) bool) (map[string]phaseStat, error) {
	reqs, err := harness.AuditRequests(path, offset, func(u string) bool { return writer(u) || kubelet(u) })
	if err != nil {
		return nil, err
	}
	return phases(reqs, writer, kubelet), nil
}

// phases times the steps of each pod's in-place update in reqs (a pod whose writes do not follow
// the protocol's order counts only for the steps it completed).
func phases(reqs []harness.AuditWrite, writer, kubelet func(string) bool) map[string]phaseStat {
	byPod := map[string][]podWrite{}
	for _, r := range reqs {
		if r.Resource != "pods" || r.Verb != "patch" || !r.OK() || (r.Subresource != "" && r.Subresource != "status") ||
			(!writer(r.User) && !kubelet(r.User)) {
			continue
		}
		k := r.Namespace + "/" + r.Name
		byPod[k] = append(byPod[k], podWrite{at: r.At, kubelet: kubelet(r.User) && !writer(r.User), status: r.Subresource == "status"})
	}
	times := map[string][]time.Duration{}
	var takeOuts, readies []time.Time
	for _, ws := range byPod {
		slices.SortStableFunc(ws, func(a, b podWrite) int { return a.at.Compare(b.at) })
		steps, out, ready, ok := podSteps(ws)
		for name, d := range steps {
			times[name] = append(times[name], d)
		}
		if ok {
			takeOuts, readies = append(takeOuts, out), append(readies, ready)
		}
	}
	// The first window: the take-outs before any pod was Ready again.
	slices.SortFunc(takeOuts, time.Time.Compare)
	slices.SortFunc(readies, time.Time.Compare)
	if len(readies) > 0 {
		window := 0
		for window < len(takeOuts) && takeOuts[window].Before(readies[0]) {
			window++
		}
		for k := 0; window+k < len(takeOuts); k++ {
			times[phaseSlot] = append(times[phaseSlot], takeOuts[window+k].Sub(readies[k]))
		}
	}
	out := map[string]phaseStat{}
	for name, ds := range times {
		out[name] = phaseStat{Pods: len(ds), P50Ms: percentileMs(ds, 0.5), P90Ms: percentileMs(ds, 0.9)}
	}
	return out
}

// podSteps times one pod's steps from its writes in order; ok when it went the whole way, with
// its take-out and its Ready again.
func podSteps(ws []podWrite) (steps map[string]time.Duration, takeOut, ready time.Time, ok bool) {
	steps = map[string]time.Duration{}
	next := func(from int, match func(podWrite) bool) int {
		for i := from; i < len(ws); i++ {
			if match(ws[i]) {
				return i
			}
		}
		return -1
	}
	isWriterStatus := func(w podWrite) bool { return !w.kubelet && w.status }
	isSpec := func(w podWrite) bool { return !w.kubelet && !w.status }
	isKubelet := func(w podWrite) bool { return w.kubelet }
	out := next(0, isWriterStatus)
	spec := next(max(out, 0), isSpec)
	if out < 0 || spec < 0 {
		return steps, time.Time{}, time.Time{}, false
	}
	if answer := next(out, isKubelet); answer >= 0 && answer < spec {
		steps[phaseAnswer] = ws[answer].at.Sub(ws[out].at)
		steps[phaseWrite] = ws[spec].at.Sub(ws[answer].at)
	}
	open := next(spec, isWriterStatus)
	if open < 0 {
		return steps, time.Time{}, time.Time{}, false
	}
	restarted := -1
	for i := spec + 1; i < open; i++ {
		if ws[i].kubelet {
			restarted = i
		}
	}
	if restarted >= 0 {
		steps[phaseRestart] = ws[restarted].at.Sub(ws[spec].at)
		steps[phaseOpen] = ws[open].at.Sub(ws[restarted].at)
	}
	r := next(open, isKubelet)
	if r < 0 {
		return steps, time.Time{}, time.Time{}, false
	}
	steps[phaseReady] = ws[r].at.Sub(ws[open].at)
	return steps, ws[out].at, ws[r].at, true
}

// printPhases prints, per in-place scenario that timed them, its steps' p50/p90 in ms.
func printPhases(results []result) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	printed := false
	for _, r := range results {
		if len(r.Phases) == 0 {
			continue // not an in-place protocol (the SidecarSet's upgrade), or not timed
		}
		if !printed {
			fmt.Fprint(tw, "in-place steps p50/p90 ms\twall s")
			for _, name := range phaseOrder {
				fmt.Fprintf(tw, "\t%s", name)
			}
			fmt.Fprintln(tw, "\t")
			printed = true
		}
		fmt.Fprintf(tw, "%s\t%.1f", r.Scenario, r.WallSeconds)
		for _, name := range phaseOrder {
			s, ok := r.Phases[name]
			if !ok {
				fmt.Fprint(tw, "\t-")
				continue
			}
			fmt.Fprintf(tw, "\t%.0f/%.0f", s.P50Ms, s.P90Ms)
		}
		fmt.Fprintln(tw, "\t")
	}
	_ = tw.Flush()
}

// isFakeKubelet matches kwok's writes: the sandbox's fake kubelets.
var isFakeKubelet = isUser(sandbox.KwokUser)
