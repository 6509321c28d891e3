package main

import "testing"

// An in-place rollout compares to the floor of its maxUnavailable on its own profile measured last
// before it (the DaemonSet's, to the floor on its own nodes); the other scenarios, the floor's own
// and a rollout without a floor before it have no ratio.
func TestFloorRatios(t *testing.T) {
	results := []result{
		{Scenario: "floor-maxu20", Profile: "rewrite", WallSeconds: 10},
		{Scenario: "floor-maxu100", Profile: "rewrite", WallSeconds: 4},
		{Scenario: "floor-maxu20/no-rewrite", Profile: "no-rewrite", WallSeconds: 5},
		{Scenario: "scaleup", Profile: "rewrite", WallSeconds: 30},
		{Scenario: "inplace-maxu20", Profile: "rewrite", WallSeconds: 12},
		{Scenario: "asts-inplace-maxu100", Profile: "rewrite", WallSeconds: 6},
		{Scenario: "sidecarset-upgrade", Profile: "rewrite", WallSeconds: 15},
		{Scenario: "deployment-rollout", Profile: "rewrite", WallSeconds: 20},
		{Scenario: "floor-ads-maxu20/no-rewrite", Profile: "no-rewrite", WallSeconds: 4},
		{Scenario: "ads-inplace-maxu20/no-rewrite", Profile: "no-rewrite", WallSeconds: 6},
		{Scenario: "ads-inplace-maxu20", Profile: "rewrite", WallSeconds: 6},
		{Scenario: "inplace-maxu100/no-rewrite", Profile: "no-rewrite", WallSeconds: 3},
		{Scenario: "asts-inplace-maxu20/no-rewrite", Profile: "no-rewrite", WallSeconds: 6},
		{Scenario: "floor-maxu20/no-rewrite", Profile: "no-rewrite", WallSeconds: 8},
		{Scenario: "sidecarset-upgrade/no-rewrite", Profile: "no-rewrite", WallSeconds: 6},
	}
	setFloorRatios(results)
	want := map[string]string{"floor-maxu20": "-", "floor-maxu100": "-", "floor-maxu20/no-rewrite": "-", "scaleup": "-",
		"inplace-maxu20": "1.20", "asts-inplace-maxu100": "1.50", "sidecarset-upgrade": "1.50", "deployment-rollout": "-",
		"floor-ads-maxu20/no-rewrite": "-", "ads-inplace-maxu20/no-rewrite": "1.50", "ads-inplace-maxu20": "-",
		"inplace-maxu100/no-rewrite": "-", "asts-inplace-maxu20/no-rewrite": "1.20", "sidecarset-upgrade/no-rewrite": "0.75"}
	for _, r := range results {
		if got := floorRatioText(r); got != want[r.Scenario] {
			t.Errorf("%s: × floor %s, want %s", r.Scenario, got, want[r.Scenario])
		}
	}
}
