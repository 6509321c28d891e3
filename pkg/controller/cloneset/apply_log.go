package cloneset

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// maxLoggedPods bounds the pods one log line names.
const maxLoggedPods = 10

// logUnpaidUpdates logs the plan's updates of pods it did not count available (they cost the
// maxUnavailable budget nothing), with the facts that made each unavailable: an operator (or the
// fault campaign) reading why a rollout took more pods at once than maxUnavailable finds it here.
func logUnpaidUpdates(ctx context.Context, snap *Snapshot, plan Plan, now time.Time) {
	if len(plan.Updates) == 0 {
		return
	}
	updated := make(map[string]bool, len(plan.Updates))
	for _, u := range plan.Updates {
		updated[u.Pod] = true
	}
	minReady := time.Duration(snap.Spec.MinReadySeconds) * time.Second
	var unpaid []string
	n := 0
	for i := range snap.Pods {
		p := &snap.Pods[i]
		if !updated[p.Name] || p.Available(now, minReady) || p.servingBeforeNormal(now, minReady) {
			continue
		}
		if n++; n <= maxLoggedPods {
			unpaid = append(unpaid, fmt.Sprintf("%s (phase %s, ready %t since %s, lifecycle %q, updating in place %t, terminating %t)",
				p.Name, p.Phase, p.Ready, p.ReadySince.Format(time.RFC3339), p.Lifecycle, p.InPlaceUpdating, p.Terminating))
		}
	}
	if n > 0 {
		ctrl.LoggerFrom(ctx).Info("updating pods that were not available (no maxUnavailable budget spent)", "count", n, "pods", unpaid)
	}
}
