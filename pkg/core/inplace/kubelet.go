package inplace

import (
	"slices"
	"time"
)

// The engine takes a pod out of service before it changes the pod's containers: it sets the
// pod's InPlaceUpdateReady readiness gate False and waits for the pod's kubelet to report Ready
// False itself, which takes the pod out of its Services. Ready is left to the kubelet: a Ready the
// engine wrote would be one the kubelet may overwrite with the Ready it computed before it saw the
// gate (putting the pod back in its Services while its containers restart), and one that some
// kubelets never rewrite at all. Kubelets differ in how fast they answer: a real one within a
// second or two; a virtual or simulated one, or one whose status manager is backed off, may not
// answer a gate's change at all. What follows learns, per node, whether its kubelet answers and
// how fast, so that the wait is as long as that node needs and no longer; on a node whose kubelet
// does not answer the engine writes Ready False itself and does not wait (as it does when a wait
// runs out). It is pure: time comes in as arguments.

// KubeletPolicy tunes the learning.
type KubeletPolicy struct {
	// Probe is the wait for a kubelet not heard from yet (and for a silent one probed again); it is
	// also the longest wait of any.
	Probe time.Duration
	// Min is the shortest wait for a kubelet that answers.
	Min time.Duration
	// Factor times a kubelet's observed p99 answer latency is its wait, within [Min, Probe].
	Factor float64
	// SilentAfter is how many waits in a row a kubelet that answered before may run out before it
	// counts as silent (one that never answered is silent after its first).
	SilentAfter int
	// Reprobe is how often a silent kubelet is waited for again, in case it answers now.
	Reprobe time.Duration
	// ClassSilent silent nodes of one kind of kubelet, with none of that kind answering, make a
	// node of that kind not heard from yet count as silent too (a rollout over fresh nodes of a
	// virtual kubelet does not probe each).
	ClassSilent int
}

// DefaultKubeletPolicy is the engine's: a kubelet not heard from is waited for 10 s at most, one
// that answers 4 × its p99 (2–10 s), one that answered before is silent after 3 waits in a row run
// out, and a silent one is probed again every 10 minutes.
func DefaultKubeletPolicy() KubeletPolicy {
	return KubeletPolicy{Probe: 10 * time.Second, Min: 2 * time.Second, Factor: 4, SilentAfter: 3, Reprobe: 10 * time.Minute, ClassSilent: 3}
}

// kubeletSamples is how many answer latencies a record keeps (the latest).
const kubeletSamples = 64

// KubeletRecord is what is known of one node's kubelet. The zero value is a kubelet not heard from.
type KubeletRecord struct {
	// Answers counts the waits it answered; Misses the waits in a row it let run out.
	Answers, Misses int
	// Silent is set once it counts as not answering; LastProbe is when it was last waited for
	// while silent (or became so).
	Silent    bool
	LastProbe time.Time
	// latencies are the last kubeletSamples answer latencies, oldest first.
	latencies []time.Duration
}

// P99 is the 99th percentile (nearest rank) of the kept answer latencies; false with none.
func (r *KubeletRecord) P99() (time.Duration, bool) {
	if len(r.latencies) == 0 {
		return 0, false
	}
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	i := (99*len(s) + 99) / 100
	return s[max(i-1, 0)], true
}

// WaitDecision is how an update on the node waits for its kubelet.
type WaitDecision struct {
	// Wait is false when the kubelet is not waited for (silent, or of a silent kind).
	Wait bool
	// Bound is the longest wait.
	Bound time.Duration
	// Probe is set when the wait tells whether the kubelet answers at all (not heard from yet, or
	// silent and due for another try).
	Probe bool
	// Why says how the decision was reached, for events and logs.
	Why string
}

// DecideWait decides the wait on a node whose record is r (nil: not heard from yet); classSilent is
// whether nodes of its kind count as silent (ClassView).
func DecideWait(r *KubeletRecord, classSilent bool, now time.Time, p KubeletPolicy) WaitDecision {
	switch {
	case r == nil || (r.Answers == 0 && !r.Silent):
		if classSilent {
			return WaitDecision{Why: "nodes of its kind do not report Ready False"}
		}
		return WaitDecision{Wait: true, Bound: p.Probe, Probe: true, Why: "not heard from yet"}
	case r.Silent:
		if now.Sub(r.LastProbe) >= p.Reprobe {
			return WaitDecision{Wait: true, Bound: p.Probe, Probe: true, Why: "silent: probed again"}
		}
		return WaitDecision{Why: "its kubelet does not report Ready False"}
	}
	p99, _ := r.P99()
	bound := time.Duration(float64(p99) * p.Factor)
	return WaitDecision{Wait: true, Bound: min(max(bound, p.Min), p.Probe), Why: "answers"}
}

// WaitDeadline is when the wait for one pod's kubelet ends, for a wait on its node that started at
// start with bound d.Bound: d.Bound after the start, or, while the node's kubelet answers other
// pods of the same wait, d.Bound after its latest answer (lastAnswer; zero: none yet) -- a kubelet
// working through a large batch is slow, not silent -- yet never later than the policy's Probe
// after the start.
func (p KubeletPolicy) WaitDeadline(start time.Time, d WaitDecision, lastAnswer time.Time) time.Time {
	wait := d.Bound
	if !lastAnswer.IsZero() {
		wait = max(wait, min(lastAnswer.Sub(start)+d.Bound, max(p.Probe, d.Bound)))
	}
	return start.Add(wait)
}

// KubeletTransition is a change of a kubelet's standing.
type KubeletTransition int

const (
	// KubeletUnchanged: no change.
	KubeletUnchanged KubeletTransition = iota
	// KubeletBecameSilent: it counts as silent from now on.
	KubeletBecameSilent
	// KubeletAnswersAgain: a silent kubelet answered.
	KubeletAnswersAgain
)

// ObserveWait records one wait on the node: the latencies of the pods its kubelet answered for
// (each a pod it reported Ready False for after the engine took it out), and whether the wait ran
// out for any. It returns the record's new value and the transition it made.
func (r KubeletRecord) ObserveWait(answered []time.Duration, missed bool, now time.Time, p KubeletPolicy) (KubeletRecord, KubeletTransition) {
	if len(answered) > 0 {
		r.latencies = append(slices.Clone(r.latencies), answered...)
		if n := len(r.latencies); n > kubeletSamples {
			r.latencies = r.latencies[n-kubeletSamples:]
		}
		r.Answers += len(answered)
		wasSilent := r.Silent
		r.Misses, r.Silent = 0, false
		if wasSilent {
			return r, KubeletAnswersAgain
		}
		return r, KubeletUnchanged
	}
	if !missed {
		return r, KubeletUnchanged
	}
	r.Misses++
	if r.Silent {
		r.LastProbe = now
		return r, KubeletUnchanged
	}
	if r.Answers == 0 || r.Misses >= p.SilentAfter {
		r.Silent, r.LastProbe = true, now
		return r, KubeletBecameSilent
	}
	return r, KubeletUnchanged
}
