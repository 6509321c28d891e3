package main

import (
	"fmt"
	"slices"
	"strings"
)

// sidecarSetUpgradeMaxUnavailable is the maxUnavailable of sidecarset-upgrade (runSidecarSet), the
// one in-place rollout whose name does not carry it.
const sidecarSetUpgradeMaxUnavailable = "20"

// floorOf names the floor scenario (floorScenarios) an in-place scenario's wall time compares to:
// floor-maxuNN for a rollout at maxUnavailable NN% (its base name ends in -maxuNN), the floor on its
// own nodes for the DaemonSet's (adsFloor), "" for the other scenarios and the floor's own.
func floorOf(scenario string) string {
	base, _, _ := strings.Cut(scenario, "/")
	if !inPlace(base) || strings.HasPrefix(base, floorPrefix) {
		return ""
	}
	if strings.HasPrefix(base, "ads-") {
		return adsFloor
	}
	if base == "sidecarset-upgrade" {
		return floorPrefix + "maxu" + sidecarSetUpgradeMaxUnavailable
	}
	i := strings.LastIndex(base, "-maxu")
	if i < 0 {
		return ""
	}
	return floorPrefix + base[i+1:]
}

// setFloorRatios sets each result's FloorRatio: its wall time over that of its floor (floorOf) on
// the same profile, the last one measured before it in results (each kind's scenarios follow a
// floor of their own, runControllers); zero where none applies.
func setFloorRatios(results []result) {
	for i := range results {
		r := &results[i]
		r.FloorRatio = 0
		floor := floorOf(r.Scenario)
		if floor == "" {
			continue
		}
		for _, f := range slices.Backward(results[:i]) {
			base, _, _ := strings.Cut(f.Scenario, "/")
			if base == floor && f.Profile == r.Profile && f.WallSeconds > 0 {
				r.FloorRatio = r.WallSeconds / f.WallSeconds
				break
			}
		}
	}
}

// floorRatioText is r's × floor cell: the ratio, or - where none applies.
func floorRatioText(r result) string {
	if r.FloorRatio == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", r.FloorRatio)
}
