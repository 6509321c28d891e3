package main

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// asks is what the driver asked of Kruise besides the workloads' specs and evictions, for the
// checker: the workloads it deleted with their pods (their pods go because it asked), and when it
// last deleted or created a workload again.
type asks struct {
	mu sync.Mutex
	// owners are the UIDs of the workloads deleted with their pods.
	owners map[types.UID]bool
	// recreated is when each workload was last deleted or created again; released when a pod of
	// each app was last taken out of its workload's selector.
	recreated, released map[string]time.Time
}

func newAsks() *asks {
	return &asks{owners: map[types.UID]bool{}, recreated: map[string]time.Time{}, released: map[string]time.Time{}}
}

// podReleased notes that a pod of app is taken out of its workload's selector now.
func (a *asks) podReleased(app string, at time.Time) { a.note(a.released, app, at) }

// releasedWithin: a pod of app was taken out of its workload's selector within window before now.
func (a *asks) releasedWithin(app string, window time.Duration, now time.Time) bool {
	return a.within(a.released, app, window, now)
}

// note records at under key in m (one of a's maps of times).
func (a *asks) note(m map[string]time.Time, key string, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m[key] = at
}

// within: m records key within window before now.
func (a *asks) within(m map[string]time.Time, key string, window time.Duration, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	at, ok := m[key]
	return ok && now.Sub(at) < window
}

// ownerDeleted notes that the workload of UID uid is deleted with its pods.
func (a *asks) ownerDeleted(uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.owners[uid] = true
}

func (a *asks) isDeletedOwner(uid types.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.owners[uid]
}

// touched notes that workload name is deleted or created again now.
func (a *asks) touched(name string, at time.Time) { a.note(a.recreated, name, at) }

// recreatedWithin: workload name was deleted or created again within window before now.
func (a *asks) recreatedWithin(name string, window time.Duration, now time.Time) bool {
	return a.within(a.recreated, name, window, now)
}
