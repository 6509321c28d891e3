package demo

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Summary is what the demo's rollout did.
type Summary struct {
	Replicas int32
	// Canary is the partition that held the canary batch (Replicas - canary pods).
	Canary         int32
	MaxUnavailable string
	Images         [2]string
	// ScaleUp is the time to the first Replicas pods ready; CanaryTime and RestTime the two
	// phases of the update; Rollout the update from the template change to every pod updated and
	// ready.
	ScaleUp, CanaryTime, RestTime, Rollout time.Duration
	// InPlace pods kept their UID and run the new revision; Recreated pods were replaced.
	InPlace, Recreated int
	// Restarts is the sum of the pods' container restart counts.
	Restarts int32
	// MinEndpoints is the fewest ready endpoints of the Service during the update; Endpoints at
	// its end.
	MinEndpoints, Endpoints int
}

// Write prints the summary as a short table.
func (s *Summary) Write(out io.Writer) {
	fmt.Fprintf(out, "\nRolled out %s → %s: %d of %d pods updated in place, %d recreated.\n", s.Images[0], s.Images[1], s.InPlace, s.Replicas, s.Recreated)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  scale-up to %d pods\t%.1fs\n", s.Replicas, s.ScaleUp.Seconds())
	fmt.Fprintf(tw, "  canary (%d pods, partition %d)\t%.1fs\n", s.Replicas-s.Canary, s.Canary, s.CanaryTime.Seconds())
	fmt.Fprintf(tw, "  the rest (%d pods, maxUnavailable %s)\t%.1fs\n", s.Canary, s.MaxUnavailable, s.RestTime.Seconds())
	fmt.Fprintf(tw, "  rollout wall time\t%.1fs\n", s.Rollout.Seconds())
	kept, once := "", ""
	if s.Recreated == 0 {
		kept = " (every pod is the same pod object: UID, node and IP kept)"
	}
	if s.Restarts == s.Replicas {
		once = " (one per pod: the app container, restarted by the kubelet for the new image)"
	}
	fmt.Fprintf(tw, "  pods recreated\t%d%s\n", s.Recreated, kept)
	fmt.Fprintf(tw, "  container restarts\t%d%s\n", s.Restarts, once)
	fmt.Fprintf(tw, "  Service endpoints ready\t%d of %d at the fewest during the rollout, %d now\n", s.MinEndpoints, s.Replicas, s.Endpoints)
	_ = tw.Flush()
}
