package inplace

import (
	"testing"
	"time"
)

func TestKubeletLearning(t *testing.T) {
	p := DefaultKubeletPolicy()
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	if d := DecideWait(nil, false, now, p); !d.Wait || !d.Probe || d.Bound != p.Probe {
		t.Fatalf("unknown node: %+v, want a probe of %s", d, p.Probe)
	}
	if d := DecideWait(nil, true, now, p); d.Wait {
		t.Fatalf("unknown node of a silent kind: %+v, want no wait", d)
	}

	// A kubelet answering in 100–300 ms is waited for 4 × its p99, at least Min.
	var r KubeletRecord
	r, tr := r.ObserveWait([]time.Duration{100 * time.Millisecond, 300 * time.Millisecond}, false, now, p)
	if tr != KubeletUnchanged || r.Answers != 2 {
		t.Fatalf("after answers: %+v %v", r, tr)
	}
	if d := DecideWait(&r, true, now, p); !d.Wait || d.Bound != p.Min || d.Probe {
		t.Fatalf("fast kubelet: %+v, want a wait of Min (a kind's silence does not matter once it answered)", d)
	}
	r, _ = r.ObserveWait([]time.Duration{time.Second}, false, now, p)
	if d := DecideWait(&r, false, now, p); d.Bound != 4*time.Second {
		t.Fatalf("p99 1s: bound %s, want 4s", d.Bound)
	}
	r, _ = r.ObserveWait([]time.Duration{5 * time.Second}, false, now, p)
	if d := DecideWait(&r, false, now, p); d.Bound != p.Probe {
		t.Fatalf("p99 5s: bound %s, want the cap %s", d.Bound, p.Probe)
	}

	// One that answered before is silent only after SilentAfter misses in a row.
	for i := 1; i < p.SilentAfter; i++ {
		if r, tr = r.ObserveWait(nil, true, now, p); tr != KubeletUnchanged || r.Silent {
			t.Fatalf("miss %d: silent too early: %+v", i, r)
		}
	}
	if r, tr = r.ObserveWait(nil, true, now, p); tr != KubeletBecameSilent || !r.Silent {
		t.Fatalf("miss %d: %+v %v, want silent", p.SilentAfter, r, tr)
	}
	if d := DecideWait(&r, false, now.Add(time.Minute), p); d.Wait {
		t.Fatalf("silent: %+v, want no wait", d)
	}
	if d := DecideWait(&r, false, now.Add(p.Reprobe), p); !d.Wait || !d.Probe {
		t.Fatalf("silent for Reprobe: %+v, want a probe", d)
	}
	if r, tr = r.ObserveWait([]time.Duration{time.Second}, false, now, p); tr != KubeletAnswersAgain || r.Silent || r.Misses != 0 {
		t.Fatalf("answer while silent: %+v %v", r, tr)
	}

	// One that never answered is silent after its first miss.
	var q KubeletRecord
	if q, tr = q.ObserveWait(nil, true, now, p); tr != KubeletBecameSilent || !q.Silent || !q.LastProbe.Equal(now) {
		t.Fatalf("never answered: %+v %v", q, tr)
	}
	// Nothing waited for (no pod needed it): no change.
	if q2, tr := q.ObserveWait(nil, false, now.Add(time.Hour), p); tr != KubeletUnchanged || q2.Misses != q.Misses {
		t.Fatalf("no wait: %+v %v", q2, tr)
	}
}

func TestKubeletSamplesAreBounded(t *testing.T) {
	var r KubeletRecord
	for i := range 3 * kubeletSamples {
		r, _ = r.ObserveWait([]time.Duration{time.Duration(i) * time.Millisecond}, false, time.Time{}, DefaultKubeletPolicy())
	}
	if len(r.latencies) != kubeletSamples {
		t.Fatalf("%d samples kept, want %d", len(r.latencies), kubeletSamples)
	}
	if p99, _ := r.P99(); p99 != time.Duration(3*kubeletSamples-1)*time.Millisecond {
		t.Fatalf("p99 %s: the latest samples count", p99)
	}
}

// A wait ends its bound after its start, or, while the node's kubelet answers other pods of the
// wait, its bound after the latest answer, never past the probe's length.
func TestWaitDeadlineFollowsAnsweringKubelet(t *testing.T) {
	p := DefaultKubeletPolicy()
	start := time.Unix(1000, 0)
	d := WaitDecision{Wait: true, Bound: 2 * time.Second}
	for _, c := range []struct {
		name       string
		lastAnswer time.Time
		want       time.Duration
	}{
		{"no answer yet", time.Time{}, 2 * time.Second},
		{"an answer early in the wait", start.Add(-time.Second), 2 * time.Second},
		{"an answer 3 s in", start.Add(3 * time.Second), 5 * time.Second},
		{"answers 9 s in: the probe's 10 s at most", start.Add(9 * time.Second), 10 * time.Second},
	} {
		if got := p.WaitDeadline(start, d, c.lastAnswer).Sub(start); got != c.want {
			t.Errorf("%s: wait %s, want %s", c.name, got, c.want)
		}
	}
}
