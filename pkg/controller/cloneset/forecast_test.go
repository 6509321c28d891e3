package cloneset

import (
	"testing"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func TestForecast(t *testing.T) {
	ip := v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
	snap := cs(6, maxUnavailable("2"), updateType(ip), pods("a", "v1", 6))
	steps := Forecast(snap, t0, Options{}, 10)
	if len(steps) != 4 {
		t.Fatalf("%d steps, want 3 batches of 2 and the end: %+v", len(steps), steps)
	}
	seen := map[string]bool{}
	for _, st := range steps[:3] {
		if len(st.Updates) != 2 {
			t.Errorf("step updates %d pods, want maxUnavailable 2", len(st.Updates))
		}
		for _, u := range st.Updates {
			if u.Mode != UpdateInPlace || seen[u.Pod] {
				t.Errorf("update %+v: want each pod once, in place", u)
			}
			seen[u.Pod] = true
		}
	}
	if last := steps[3]; len(last.Updates)+len(last.Creates)+len(last.Deletes) != 0 {
		t.Errorf("last step %+v, want the end", last)
	}
	if snap.Pods[0].Revision != "v1" {
		t.Error("Forecast changed the snapshot's pods")
	}
	// Paused: nothing moves, and the forecast says why.
	steps = Forecast(cs(6, paused, updateType(ip), pods("a", "v1", 6)), t0, Options{}, 10)
	if len(steps) != 1 || len(steps[0].Waits) == 0 {
		t.Errorf("paused: %+v, want one step of waits", steps)
	}
	// A partition stops it early.
	steps = Forecast(cs(6, partition("4"), updateType(ip), pods("a", "v1", 6)), t0, Options{}, 10)
	n := 0
	for _, st := range steps {
		n += len(st.Updates)
	}
	if n != 2 {
		t.Errorf("partition 4 of 6: %d updates forecast, want 2", n)
	}
}
