package cloneset

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Step is one step of a forecast rollout: what the planner does once the previous step's pods are
// updated and available.
type Step struct {
	Updates []Update
	Creates []Creation
	Deletes []Deletion
	// Waits says why nothing more moves, on the last step only (hooks, pause, partition...).
	Waits []string
}

// Forecast runs the planner forward from snap, assuming every pod it touches comes back ready
// (available minReadySeconds later) and nothing else changes, and returns its steps, at most max.
// It is what `kubectl kruise rollout plan` prints: the same pure planner as the controller, on the
// same snapshot.
func Forecast(snap *Snapshot, now time.Time, opts Options, max int) []Step {
	s := *snap
	s.Pods = slices.Clone(snap.Pods)
	minReady := time.Duration(s.Spec.MinReadySeconds) * time.Second
	var steps []Step
	for range max {
		p := Compute(&s, now, opts)
		if len(p.Updates) == 0 && len(p.Creates) == 0 && len(p.Deletes) == 0 {
			if len(steps) > 0 || len(p.Notes) > 0 {
				steps = append(steps, Step{Waits: p.Notes})
			}
			break
		}
		steps = append(steps, Step{Updates: p.Updates, Creates: p.Creates, Deletes: p.Deletes})
		gone := map[string]bool{}
		for _, d := range p.Deletes {
			gone[d.Pod] = true
		}
		var created []PodFacts
		for _, u := range p.Updates {
			if u.Mode == UpdateRecreate {
				gone[u.Pod] = true
				continue
			}
			i := slices.IndexFunc(s.Pods, func(f PodFacts) bool { return f.Name == u.Pod })
			s.Pods[i].Revision, s.Pods[i].Ready, s.Pods[i].ReadySince, s.Pods[i].InPlaceUpdating = u.To, true, now, false
		}
		for n, c := range p.Creates {
			name := fmt.Sprintf("(new pod %d.%d)", len(steps), n+1)
			created = append(created, PodFacts{Name: name, InstanceID: name, Revision: c.Revision, Phase: corev1.PodRunning,
				Ready: true, ReadySince: now, CreationTime: now, NodeName: "(scheduled)", PreNormalReleased: true, UpdatedReleased: true})
		}
		s.Pods = slices.DeleteFunc(s.Pods, func(f PodFacts) bool { return gone[f.Name] })
		s.Pods = append(s.Pods, created...)
		now = now.Add(minReady + time.Second)
	}
	return steps
}

// Snapshot reads cs's pods and revisions the way the controller does and returns the planner's
// input (nothing is written).
func (r *Reconciler) Snapshot(ctx context.Context, cs *v1alpha1.CloneSet) (*Snapshot, error) {
	obs, err := r.observe(ctx, cs, false)
	if err != nil {
		return nil, err
	}
	return obs.snap, nil
}
