package podcontrol

import (
	"testing"
	"time"
)

func TestReconcilePacer(t *testing.T) {
	var p ReconcilePacer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if d := p.Hold("ns/a", now); d != 0 {
		t.Fatalf("hold before any reconcile: %v", d)
	}
	p.Done("ns/a", 20*time.Millisecond, now)
	if d := p.Hold("ns/a", now.Add(100*time.Millisecond)); d != 80*time.Millisecond {
		t.Fatalf("hold = %v, want the rest of %d × 20 ms", d, ThinkRatio)
	}
	if d := p.Hold("ns/b", now); d != 0 {
		t.Fatalf("another workload held: %v", d)
	}
	if d := p.Hold("ns/a", now.Add(ThinkRatio*20*time.Millisecond)); d != 0 {
		t.Fatalf("hold after the gap: %v", d)
	}
	p.Done("ns/a", time.Minute, now)
	if d := p.Hold("ns/a", now); d != MaxThinkGap {
		t.Fatalf("hold after a long think = %v, want at most %v", d, MaxThinkGap)
	}
	p.Done("ns/a", 0, now)
	if d := p.Hold("ns/a", now); d != 0 || len(p.next) != 0 {
		t.Fatalf("hold after no think: %v (%d kept)", d, len(p.next))
	}
	p.Done("ns/a", time.Millisecond, now)
	p.Forget("ns/a")
	if len(p.next) != 0 {
		t.Fatalf("forgotten workload kept")
	}
}
