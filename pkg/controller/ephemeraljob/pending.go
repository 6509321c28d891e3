package ephemeraljob

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// pendingTimeout is how long an injection the cache does not show yet still counts as in flight.
const pendingTimeout = 30 * time.Second

// pending remembers, per job, the pods it injected until the cache shows their new containers, so
// that a reconcile on a stale cache neither exceeds parallelism nor picks those pods again (the
// API server's resourceVersion check refuses a second injection anyway).
type pending struct {
	mu   sync.Mutex
	jobs map[string]map[types.UID]time.Time
	// conflicts are the conflicting pods already reported, per job, so that each is reported once.
	conflicts map[string]sets.Set[types.UID]
}

func newPending() *pending {
	return &pending{jobs: map[string]map[types.UID]time.Time{}, conflicts: map[string]sets.Set[types.UID]{}}
}

// firstConflict reports whether the conflict of pod uid with the job key is new, and remembers it.
func (p *pending) firstConflict(key string, uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conflicts[key] == nil {
		p.conflicts[key] = sets.New[types.UID]()
	}
	if p.conflicts[key].Has(uid) {
		return false
	}
	p.conflicts[key].Insert(uid)
	return true
}

// add records that pod was injected by the job key at now.
func (p *pending) add(key string, uid types.UID, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.jobs[key] == nil {
		p.jobs[key] = map[types.UID]time.Time{}
	}
	p.jobs[key][uid] = now
}

// observe drops the records the cache now shows (or that are gone or too old) and returns the
// rest.
func (p *pending) observe(key string, job *v1alpha1.EphemeralJob, pods []*corev1.Pod, now time.Time) sets.Set[types.UID] {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := sets.New[types.UID]()
	recs := p.jobs[key]
	if len(recs) == 0 {
		return out
	}
	seen := map[types.UID]*corev1.Pod{}
	for _, pod := range pods {
		seen[pod.UID] = pod
	}
	for uid, at := range recs {
		pod, ok := seen[uid]
		if !ok || Injected(job, pod) || now.Sub(at) > pendingTimeout {
			delete(recs, uid)
			continue
		}
		out.Insert(uid)
	}
	return out
}

// forget drops everything recorded for the job key.
func (p *pending) forget(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.jobs, key)
	delete(p.conflicts, key)
}
