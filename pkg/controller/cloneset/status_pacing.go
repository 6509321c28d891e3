package cloneset

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// statusInterval is the least time between two status writes that only move counters during a
// rollout. Every pod event reconciles the CloneSet; writing each intermediate count would cost
// about one API write per pod. Counters still reach the API at least this often, and a status
// that settles, or changes generation, revisions or conditions, is written at once.
const statusInterval = time.Second

// statusPacer remembers when each CloneSet's status was last written.
type statusPacer struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// wait returns how long to hold back the write of next over cur (0: write now).
func (p *statusPacer) wait(key string, cur, next *v1alpha1.CloneSetStatus, replicas int32, now time.Time) time.Duration {
	if significant(cur, next, replicas) {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.last[key].Add(statusInterval).Sub(now); d > 0 {
		return d
	}
	return 0
}

// wrote records a status write.
func (p *statusPacer) wrote(key string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[string]time.Time{}
	}
	p.last[key] = now
}

func (p *statusPacer) forget(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, key)
}

// significant reports whether next must be written without delay: the controller observed a new
// generation, the revisions or conditions changed (a condition whose lastUpdateTime alone moved,
// Progressing during a rollout, is progress), or the CloneSet settled (every replica there,
// ready and, as far as the partition allows, updated). Counts moving during a scale or a rollout
// (replicas included) are progress, written at the pace of statusInterval.
func significant(cur, next *v1alpha1.CloneSetStatus, replicas int32) bool {
	if cur.ObservedGeneration != next.ObservedGeneration || cur.UpdateRevision != next.UpdateRevision ||
		cur.CurrentRevision != next.CurrentRevision ||
		ptr.Deref(cur.CollisionCount, 0) != ptr.Deref(next.CollisionCount, 0) || !sameConditions(cur.Conditions, next.Conditions) {
		return true
	}
	return next.Replicas == replicas && next.ReadyReplicas == replicas && next.AvailableReplicas == replicas &&
		next.UpdatedReplicas >= next.ExpectedUpdatedReplicas && next.UpdatedReadyReplicas >= next.ExpectedUpdatedReplicas
}

// sameConditions compares condition lists ignoring lastUpdateTime.
func sameConditions(a, b []v1alpha1.CloneSetCondition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.LastUpdateTime = y.LastUpdateTime
		if !equality.Semantic.DeepEqual(x, y) {
			return false
		}
	}
	return true
}
