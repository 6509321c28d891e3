package main

import "testing"

// The floor's window is its maxUnavailable of n rounded up, as the controllers count it, at least
// one pod.
func TestFloorWindow(t *testing.T) {
	for _, c := range []struct{ n, maxu20, maxu100 int }{{500, 100, 500}, {20, 4, 20}, {7, 2, 7}, {1, 1, 1}, {0, 1, 1}} {
		var got []int
		for _, s := range floorScenarios {
			w, err := floorWindow(c.n, s.maxUnavailable)
			if err != nil {
				t.Fatalf("%s of %d: %v", s.name, c.n, err)
			}
			got = append(got, w)
		}
		if got[0] != c.maxu20 || got[1] != c.maxu100 {
			t.Errorf("windows of %d pods: %v, want [%d %d]", c.n, got, c.maxu20, c.maxu100)
		}
	}
}

// Every in-place rollout's floor (floorOf) is a floor scenario the bench runs before it; a name no
// floor scenario has is refused rather than measuring nothing.
func TestFloorsNamed(t *testing.T) {
	for _, scenario := range []string{"inplace-maxu20", "inplace-maxu100", "asts-inplace-maxu20", "asts-inplace-maxu100", "sidecarset-upgrade"} {
		got, err := floorsNamed([]string{floorOf(scenario)})
		if err != nil || len(got) != 1 || got[0].name != floorOf(scenario) {
			t.Errorf("%s's floor %q: %v, %v", scenario, floorOf(scenario), got, err)
		}
	}
	if all, err := floorsNamed(nil); err != nil || len(all) != len(floorScenarios) {
		t.Errorf("no names: %v, %v; want every floor scenario", all, err)
	}
	if _, err := floorsNamed([]string{"floor-maxu20", "floor-maxu50"}); err == nil {
		t.Error("an unknown floor was not refused")
	}
}
