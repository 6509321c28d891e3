package cloneset

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/pkg/inplace"
)

// Expectations remember the writes of each CloneSet that the informer cache has not shown yet.
// While any is pending (and younger than the timeout), the CloneSet is not planned again: a plan
// made from a stale cache would create or delete a pod twice.
type Expectations struct {
	mu      sync.Mutex
	pending map[string]map[string]expectation // CloneSet key → pod name → what must be seen
}

type expectation struct {
	kind     string // "create", "delete" or "update"
	revision string // for "update": the revision label the pod must show
	since    time.Time
}

// NewExpectations returns an empty set.
func NewExpectations() *Expectations {
	return &Expectations{pending: map[string]map[string]expectation{}}
}

func (e *Expectations) expect(key, pod string, x expectation) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pending[key] == nil {
		e.pending[key] = map[string]expectation{}
	}
	e.pending[key][pod] = x
}

// ExpectCreate records that pod was created.
func (e *Expectations) ExpectCreate(key, pod string, now time.Time) {
	e.expect(key, pod, expectation{kind: "create", since: now})
}

// ExpectDelete records that pod was deleted.
func (e *Expectations) ExpectDelete(key, pod string, now time.Time) {
	e.expect(key, pod, expectation{kind: "delete", since: now})
}

// ExpectUpdate records that pod was moved to revision.
func (e *Expectations) ExpectUpdate(key, pod, revision string, now time.Time) {
	e.expect(key, pod, expectation{kind: "update", revision: revision, since: now})
}

// Drop removes what was recorded for one pod of key, after a write that failed.
func (e *Expectations) Drop(key, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending[key], pod)
}

// Forget drops everything recorded for key.
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending, key)
}

// Pending drops the expectations the cache (pods) now satisfies or that are older than timeout,
// and reports whether any remain.
func (e *Expectations) Pending(key string, pods map[string]*corev1.Pod, now time.Time, timeout time.Duration) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for name, x := range e.pending[key] {
		pod, seen := pods[name]
		var met bool
		switch x.kind {
		case "create":
			met = seen
		case "delete":
			met = !seen || pod.DeletionTimestamp != nil
		case "update":
			met = !seen || pod.Labels[inplace.RevisionLabel] == x.revision
		}
		if met || now.Sub(x.since) > timeout {
			delete(e.pending[key], name)
		}
	}
	return len(e.pending[key]) > 0
}
