package main

import (
	"testing"
	"time"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

func TestPhasesTimeEachStepAndTheWindowsSlots(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	var reqs []harness.AuditWrite
	add := func(pod, user, sub string, ms int) {
		reqs = append(reqs, harness.AuditWrite{User: user, Verb: "patch", Resource: "pods", Subresource: sub, Namespace: "ns", Name: pod,
			Code: 200, At: t0.Add(time.Duration(ms) * time.Millisecond)})
	}
	const w, k = "writer", sandbox.KwokUser
	// A window of two: a and b are taken out at once, c once a is Ready again.
	for _, p := range []struct {
		pod                                                string
		out, answer, spec, restart1, restart2, open, ready int
	}{
		{"a", 0, 100, 150, 300, 400, 450, 500},
		{"b", 0, 120, 160, 200, 350, 460, 520},
		{"c", 600, 700, 720, 800, 900, 950, 1000},
	} {
		add(p.pod, w, "status", p.out)
		add(p.pod, k, "status", p.answer)
		add(p.pod, w, "", p.spec)
		add(p.pod, k, "status", p.restart1)
		add(p.pod, k, "status", p.restart2)
		add(p.pod, w, "status", p.open)
		add(p.pod, k, "status", p.ready)
	}
	// Writes that are not the protocol's are left out: a failed one, a read, another resource,
	// another client's.
	reqs = append(reqs, harness.AuditWrite{User: w, Verb: "patch", Resource: "pods", Subresource: "status", Namespace: "ns", Name: "a", Code: 409, At: t0},
		harness.AuditWrite{User: w, Verb: "get", Resource: "pods", Namespace: "ns", Name: "c", Code: 200, At: t0},
		harness.AuditWrite{User: w, Verb: "patch", Resource: "clonesets", Subresource: "status", Namespace: "ns", Name: "a", Code: 200, At: t0},
		harness.AuditWrite{User: "someone-else", Verb: "patch", Resource: "pods", Subresource: "status", Namespace: "ns", Name: "a", Code: 200, At: t0.Add(200 * time.Millisecond)})

	got := phases(reqs, isUser(w), isFakeKubelet)
	want := map[string]phaseStat{
		phaseAnswer:  {Pods: 3, P50Ms: 100, P90Ms: 120},
		phaseWrite:   {Pods: 3, P50Ms: 40, P90Ms: 50},
		phaseRestart: {Pods: 3, P50Ms: 190, P90Ms: 250},
		phaseOpen:    {Pods: 3, P50Ms: 50, P90Ms: 110},
		phaseReady:   {Pods: 3, P50Ms: 50, P90Ms: 60},
		phaseSlot:    {Pods: 1, P50Ms: 100, P90Ms: 100},
	}
	for name, ws := range want {
		if got[name] != ws {
			t.Errorf("%s: got %+v, want %+v", name, got[name], ws)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got steps %v, want %v", got, want)
	}
}

func TestPhasesOfAPodThatStopsHalfway(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// Taken out and answered, its spec written, never opened: the first two steps only, and no
	// slot (it never was Ready again).
	reqs := []harness.AuditWrite{
		{User: "m", Verb: "patch", Resource: "pods", Subresource: "status", Name: "a", Code: 200, At: at(0)},
		{User: sandbox.KwokUser, Verb: "patch", Resource: "pods", Subresource: "status", Name: "a", Code: 200, At: at(30)},
		{User: "m", Verb: "patch", Resource: "pods", Name: "a", Code: 200, At: at(50)},
	}
	got := phases(reqs, isUser("m"), isFakeKubelet)
	if got[phaseAnswer].P50Ms != 30 || got[phaseWrite].P50Ms != 20 || len(got) != 2 {
		t.Errorf("got %v, want answer 30 ms and write 20 ms alone", got)
	}
}
