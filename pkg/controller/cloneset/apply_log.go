package cloneset

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// maxLoggedPods bounds the pods one log line names.
const maxLoggedPods = 10

// logUnpaidUpdates logs the plan's updates of pods it did not count available (Update.Unpaid: they
// cost the maxUnavailable budget nothing), with the facts that made each unavailable: an operator
// (or the fault campaign) reading why a rollout took more pods at once than maxUnavailable finds it
// here.
func logUnpaidUpdates(ctx context.Context, snap *Snapshot, plan Plan) {
	unpaid := map[string]bool{}
	for _, u := range plan.Updates {
		if u.Unpaid {
			unpaid[u.Pod] = true
		}
	}
	if len(unpaid) == 0 {
		return
	}
	var named []string
	for i := range snap.Pods {
		if p := &snap.Pods[i]; unpaid[p.Name] && len(named) < maxLoggedPods {
			named = append(named, fmt.Sprintf("%s (phase %s, ready %t since %s, lifecycle %q, updating in place %t, terminating %t)",
				p.Name, p.Phase, p.Ready, p.ReadySince.Format(time.RFC3339), p.Lifecycle, p.InPlaceUpdating, p.Terminating))
		}
	}
	ctrl.LoggerFrom(ctx).Info("updating pods that were not available (no maxUnavailable budget spent)", "count", len(unpaid), "pods", named)
}
