package podcontrol

import (
	"sync"
	"time"
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
