package podcontrol

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StatusInterval is the least time between two status writes of a workload that only move
// counters during a rollout. Every pod event reconciles the workload; writing each intermediate
// count would cost about one API write per pod. Counters still reach the API at least this often,
// and a status that settles, or changes generation, revisions or conditions, is written at once.
const StatusInterval = time.Second

// StatusPacer remembers when each workload's status was last written. The zero StatusPacer is
// ready to use.
type StatusPacer struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// Wait returns how long to hold back a status write of the workload key (0: write now);
// significant says the new status must not wait (see StatusInterval).
func (p *StatusPacer) Wait(key string, significant bool, now time.Time) time.Duration {
	if significant {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.last[key].Add(StatusInterval).Sub(now); d > 0 {
		return d
	}
	return 0
}

// Wrote records a status write.
func (p *StatusPacer) Wrote(key string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[string]time.Time{}
	}
	p.last[key] = now
}

// Forget drops what was recorded of a deleted workload.
func (p *StatusPacer) Forget(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, key)
}

// Write writes next as obj's status (Control.WriteStatus) unless it is semantically equal to cur,
// the status obj has; a change that is not significant waits while the last write is less than
// StatusInterval old, and Write returns how long (nothing is written then).
func (p *StatusPacer) Write(ctx context.Context, c *Control, key string, obj client.Object, cur, next any, significant bool,
	now time.Time) (time.Duration, error) {
	if equality.Semantic.DeepEqual(cur, next) {
		return 0, nil
	}
	if wait := p.Wait(key, significant, now); wait > 0 {
		return wait, nil
	}
	if err := c.WriteStatus(ctx, obj, next); err != nil {
		return 0, err
	}
	p.Wrote(key, now)
	return 0, nil
}

// Requeue is how soon a reconcile asks to run again, the soonest of what it waits for; zero for
// not at all.
type Requeue time.Duration

// At asks to run again at at, a second late (stored times have whole seconds); a zero at asks
// nothing.
func (q *Requeue) At(now, at time.Time) {
	if !at.IsZero() {
		q.After(max(at.Sub(now), 0) + time.Second)
	}
}

// After asks to run again after d (d ≤ 0 asks nothing).
func (q *Requeue) After(d time.Duration) {
	if d > 0 && (*q == 0 || d < time.Duration(*q)) {
		*q = Requeue(d)
	}
}

// Result is the reconcile result that runs again then.
func (q Requeue) Result() ctrl.Result { return ctrl.Result{RequeueAfter: time.Duration(q)} }
