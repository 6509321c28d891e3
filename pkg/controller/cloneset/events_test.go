package cloneset

import (
	"testing"

	"k8s.io/client-go/tools/events"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

func TestWaitReporterEmitsOncePerReason(t *testing.T) {
	rec := events.NewFakeRecorder(20)
	r := &Reconciler{Base: workloadloop.Base{Recorder: rec}}
	cs := &v1alpha1.CloneSet{}
	var w podcontrol.WaitReporter
	steps := []Plan{
		{Notes: []string{"3 unavailable ≥ maxUnavailable 3 (replicas 10, 7 available): 5 updates waiting"}},
		{Notes: []string{"3 unavailable ≥ maxUnavailable 3 (replicas 10, 7 available): 2 updates waiting"}}, // same reason
		{Notes: []string{"paused: 4 pods above partition 0 not updated"}},                                   // new reason
		{Refusals: []Refusal{{Pod: "a", Reason: "env changed"}}, Notes: []string{"paused: 4 pods above partition 0 not updated"}},
		{Refusals: []Refusal{{Pod: "a", Reason: "env changed"}}, Notes: []string{"paused: 4 pods above partition 0 not updated"}}, // nothing new
		{}, // nothing to report
	}
	for _, p := range steps {
		w.Report(r.Recorder, cs, "ns/web", refusalMessage(cs, p.Refusals), p.Notes)
	}
	var got []string
	for len(rec.Events) > 0 {
		got = append(got, <-rec.Events)
	}
	if len(got) != 3 {
		t.Fatalf("events %q; want 3 (first wait, new wait reason, refusal)", got)
	}
	for i, want := range []string{"Normal UpdateWaiting", "Normal UpdateWaiting", "Warning InPlaceUpdateRefused"} {
		if len(got[i]) < len(want) || got[i][:len(want)] != want {
			t.Errorf("event %d = %q, want prefix %q", i, got[i], want)
		}
	}
}
