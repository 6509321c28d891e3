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

// MaxUpdatesPerReconcile bounds the pods one reconcile of a workload updates or recreates (the
// CloneSet's planner): a plan with more stops there and asks to run again at once, planning the
// rest from a fresh snapshot.
//
// A reconcile holds the version of every pod it planned from until it returns while the writes it
// makes put new versions in the cache: planning all 10,000 pods of a maxUnavailable 100% rollout at
// once kept two versions of each in memory for minutes, and kept the workload from seeing a spec
// change for as long.
const MaxUpdatesPerReconcile = 500

// MaxCreatesPerReconcile bounds the pods one reconcile of a workload creates (the burst of
// Kubernetes' ReplicaSet controller): the next reconcile, which the new pods' events bring, creates
// the next ones. A plan then takes memory in proportion to the pods that exist, not to
// spec.replicas (2147483647 replicas once planned as many creations and took the manager down).
const MaxCreatesPerReconcile = 500

// ThinkRatio is the least time between two reconciles of one workload as a multiple of the last
// one's think time (observing, planning and computing its status: the part that grows with the
// pods, not the writes' round trips), MaxThinkGap the most. Every pod event reconciles its
// workload; with thousands of pods in flight the events come faster than a reconcile of all of them
// takes, and back to back reconciles of a 10,000-pod CloneSet took 3.1 times the CPU per pod of a
// 500-pod one through a rollout. Spaced so, a workload's reconciles think for at most a tenth of
// the time, and a workload of a few hundred pods waits a few milliseconds. The gap plays the part
// of kube-controller-manager's --endpoint-updates-batch-period, sized by the work it saves.
const (
	ThinkRatio  = 9
	MaxThinkGap = time.Second
)

// ReconcilePacer spaces the reconciles of each workload by ThinkRatio times the think time of the
// last one. The zero ReconcilePacer is ready to use.
type ReconcilePacer struct {
	mu   sync.Mutex
	next map[string]time.Time
}

// Hold returns how long the reconcile of the workload key must wait (0: run now).
func (p *ReconcilePacer) Hold(key string, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(p.next[key].Sub(now), 0)
}

// Done records that a reconcile of key ended at now after thinking for think.
func (p *ReconcilePacer) Done(key string, think time.Duration, now time.Time) {
	gap := min(think*ThinkRatio, MaxThinkGap)
	p.mu.Lock()
	defer p.mu.Unlock()
	if gap <= 0 {
		delete(p.next, key)
		return
	}
	if p.next == nil {
		p.next = map[string]time.Time{}
	}
	p.next[key] = now.Add(gap)
}

// Forget drops what was recorded of a deleted workload.
func (p *ReconcilePacer) Forget(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.next, key)
}
