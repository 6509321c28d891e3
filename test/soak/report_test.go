package main

import (
	"strings"
	"testing"
	"time"

	"github.com/kruise-ng/kruise/test/harness"
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

// A pod deletion only others made (kwok deleting by name the pod recreated under a name it was
// removing) is set apart; one kruise-manager made, or one the audit log does not show, stays.
func TestForeignDeletionsSetApart(t *testing.T) {
	at := time.Now()
	r := &report{violations: []violation{
		{Check: checkDeletion, Message: "db-2 gone", At: at, Pods: []string{"db-2"}},
		{Check: checkDeletion, Message: "api-x gone", At: at, Pods: []string{"api-x"}},
		{Check: checkDeletion, Message: "web-y gone", At: at, Pods: []string{"web-y"}},
		{Check: checkTakeOut, Message: "took db-2 out", At: at, Pods: []string{"db-2"}},
	}}
	del := func(user, name string, d time.Duration) harness.AuditWrite {
		return harness.AuditWrite{User: user, Verb: "delete", Resource: "pods", Namespace: ns, Name: name, Code: 200, At: at.Add(d)}
	}
	r.setApartForeignDeletions([]harness.AuditWrite{
		del("kwok-controller", "db-2", -time.Second),
		del("kwok-controller", "api-x", 0), del(managerUser, "api-x", -time.Second),
		del("kwok-controller", "web-y", -time.Minute), // too early: another pod of that name
	})
	var kept []string
	for _, v := range r.violations {
		kept = append(kept, v.Message)
	}
	if strings.Join(kept, ",") != "api-x gone,web-y gone,took db-2 out" || len(r.foreign) != 1 || !strings.Contains(r.foreign[0], "kwok-controller") {
		t.Fatalf("violations %q, foreign %q", kept, r.foreign)
	}
}
