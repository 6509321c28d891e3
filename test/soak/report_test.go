package main

import (
	"strings"
	"testing"
	"time"
)

// The report shows the operations and faults around a violation: 30 s before it to 5 s after.
func TestEventLogAround(t *testing.T) {
	l := &eventLog{}
	l.add("op: first")
	now := time.Now()
	l.add("fault: second")
	got := l.around(now)
	if len(got) != 2 || !strings.HasSuffix(got[1], "fault: second") {
		t.Fatalf("around(now) = %q, want both lines", got)
	}
	if got := l.around(now.Add(time.Minute)); len(got) != 0 {
		t.Fatalf("around(now+1m) = %q, want none", got)
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{4 * time.Second, time.Second, 3 * time.Second, 2 * time.Second}
	if p := percentile(ds, 50); p != 2*time.Second {
		t.Errorf("p50 = %s, want 2s", p)
	}
	if p := percentile(ds, 99); p != 4*time.Second {
		t.Errorf("p99 = %s, want 4s", p)
	}
	if p := percentile(nil, 99); p != 0 {
		t.Errorf("p99 of none = %s", p)
	}
}
