package cloneset

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/inplace"
	"github.com/kruise-ng/kruise/pkg/inplace/engine"
)

// Expectations remember the writes of each CloneSet that the informer cache has not shown yet.
// While any is pending (and younger than the timeout), the CloneSet is not planned again: a plan
// made from a stale cache would create or delete a pod twice.
type Expectations struct {
	mu      sync.Mutex
	pending map[string]map[string]expectation // CloneSet key → pod name → what must be seen
	// opens are the InPlaceUpdateReady gates opened and not yet seen open in the cache. They do not
	// hold the plan back (opening a gate changes no count the plan bounds); they only keep the
	// controller from opening the same gate twice.
	opens map[string]map[string]time.Time
}

type expectation struct {
	kind     string // "create", "delete", "update", "resume", "lifecycle" or "batch"
	revision string // "update": the revision label the pod must show; "lifecycle": the state; "batch": the state annotation before
	since    time.Time
}

// NewExpectations returns an empty set.
func NewExpectations() *Expectations {
	return &Expectations{pending: map[string]map[string]expectation{}, opens: map[string]map[string]time.Time{}}
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

// ExpectResume records that pod's deferred in-place update was applied.
func (e *Expectations) ExpectResume(key, pod string, now time.Time) {
	e.expect(key, pod, expectation{kind: "resume", since: now})
}

// ExpectLifecycle records that pod was moved to lifecycle state.
func (e *Expectations) ExpectLifecycle(key, pod, state string, now time.Time) {
	e.expect(key, pod, expectation{kind: "lifecycle", revision: state, since: now})
}

// ExpectBatch records that the next container batch of pod was applied over the in-place update
// state annotation state.
func (e *Expectations) ExpectBatch(key, pod, state string, now time.Time) {
	e.expect(key, pod, expectation{kind: "batch", revision: state, since: now})
}

// ExpectOpen records that pod's InPlaceUpdateReady gate was opened.
func (e *Expectations) ExpectOpen(key, pod string, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.opens[key] == nil {
		e.opens[key] = map[string]time.Time{}
	}
	e.opens[key][pod] = now
}

// Opening reports whether pod's gate was opened and the cache does not show it yet.
func (e *Expectations) Opening(key, pod string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.opens[key][pod]
	return ok
}

// Drop removes what was recorded for one pod of key, after a write that failed.
func (e *Expectations) Drop(key, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending[key], pod)
	delete(e.opens[key], pod)
}

// Forget drops everything recorded for key.
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending, key)
	delete(e.opens, key)
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
			met = !seen || inplace.AtRevision(pod.Labels[inplace.RevisionLabel], x.revision)
		case "batch":
			met = !seen || pod.Annotations[appspub.InPlaceUpdateStateKey] != x.revision
		case "lifecycle":
			met = !seen || pod.Labels[appspub.LifecycleStateKey] == x.revision
		case "resume":
			met = !seen || pod.Annotations[appspub.InPlaceUpdateGraceKey] == ""
		}
		if met || now.Sub(x.since) > timeout {
			delete(e.pending[key], name)
		}
	}
	for name, since := range e.opens[key] {
		pod, seen := pods[name]
		if !seen || !engine.GateFalse(pod) || now.Sub(since) > timeout {
			delete(e.opens[key], name)
		}
	}
	return len(e.pending[key]) > 0
}
