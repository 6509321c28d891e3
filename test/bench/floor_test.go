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
