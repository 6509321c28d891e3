package podcontrol

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// Expectations remember the writes of each workload that the informer cache has not shown yet.
// While any is pending, the workload is not planned again: a plan made from a stale cache would
// create or delete a pod twice. One the cache has not shown within the timeout is checked against
// the API server rather than trusted or dropped (Pending).
type Expectations struct {
	mu      sync.Mutex
	pending map[string]map[string]expectation // workload key → pod name → what must be seen
	// opens are the InPlaceUpdateReady gates opened and not yet seen open in the cache. They do not
	// hold the plan back (opening a gate changes no count the plan bounds); they only keep the
	// controller from opening the same gate twice.
	opens map[string]map[string]opening
}

// opening is a gate opened at the end of one in-place update: the pod's update state annotation
// names the update. A pod the cache shows under another update (taken out again since) is not
// the one opened.
type opening struct {
	update string
	since  time.Time
}

type expectation struct {
	kind     string // "create", "delete", "update", "resume", "lifecycle", "batch" or "annotation"
	revision string // "update": the revision label the pod must show; "lifecycle": the state; "batch": the state annotation before; "annotation": its value
	key      string // "annotation": the annotation
	since    time.Time
}

// NewExpectations returns an empty set.
func NewExpectations() *Expectations {
	return &Expectations{pending: map[string]map[string]expectation{}, opens: map[string]map[string]opening{}}
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

// ExpectAnnotation records that pod's annotation key was set to value (a SidecarSet's upgrade
// of its sidecars, seen by its hash entry).
func (e *Expectations) ExpectAnnotation(key, pod, annotation, value string, now time.Time) {
	e.expect(key, pod, expectation{kind: "annotation", key: annotation, revision: value, since: now})
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

// ExpectOpen records that pod's InPlaceUpdateReady gate was opened, ending the in-place update
// its state annotation (as observed) records.
func (e *Expectations) ExpectOpen(key string, pod *corev1.Pod, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.opens[key] == nil {
		e.opens[key] = map[string]opening{}
	}
	e.opens[key][pod.Name] = opening{update: pod.Annotations[appspub.InPlaceUpdateStateKey], since: now}
}

// Opening reports whether pod's gate was opened at the end of the update it shows, and the cache
// does not show the gate open yet. A pod taken out again for a new update since is not opening:
// that update's end opens it again.
func (e *Expectations) Opening(key string, pod *corev1.Pod) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	o, ok := e.opens[key][pod.Name]
	return ok && !o.met(pod)
}

// met reports whether pod no longer shows the gate closed on the update opened: open, or closed
// on another update.
func (o opening) met(pod *corev1.Pod) bool {
	return !inplace.GateFalse(pod) || pod.Annotations[appspub.InPlaceUpdateStateKey] != o.update
}

// Drop removes what was recorded for one pod of key, after a write that failed.
func (e *Expectations) Drop(key, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending[key], pod)
	delete(e.opens[key], pod)
	e.dropEmpty(key)
}

// Forget drops everything recorded for key.
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending, key)
	delete(e.opens, key)
}

// Pending drops the expectations the cached pods meet and reports whether the plan must wait for
// the others: planned from a cache without the controller's own writes, it would repeat them (a
// second create, a second delete). Writes the cache has not shown within timeout are checked
// against live, the pods as the API server has them. A write they show stands and the cache is
// lagging: the plan waits another timeout for it, so a lagging cache costs one read per timeout,
// not one per reconcile. A write they do not show was undone (a created pod deleted again): the
// cache will never show it, and it is dropped. The plan is never made from live, which would mix
// a fresh view with the stale cache of the next reconcile.
func (e *Expectations) Pending(key string, cached map[string]*corev1.Pod, now time.Time, timeout time.Duration,
	live func() (map[string]*corev1.Pod, error)) (bool, error) {
	wait, stale := e.settle(key, cached, now, timeout)
	if wait || !stale {
		return wait, nil
	}
	pods, err := live()
	if err != nil {
		return true, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for name, x := range e.pending[key] {
		if pod, seen := pods[name]; x.met(pod, seen) {
			x.since = now
			e.pending[key][name] = x
		} else {
			delete(e.pending[key], name)
		}
	}
	e.dropEmpty(key)
	return len(e.pending[key]) > 0, nil
}

// settle drops the expectations pods meet, and the gate openings they show or that are older than
// timeout, and reports whether unmet expectations younger (wait) or only older (stale) than
// timeout remain.
func (e *Expectations) settle(key string, pods map[string]*corev1.Pod, now time.Time, timeout time.Duration) (wait, stale bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for name, x := range e.pending[key] {
		pod, seen := pods[name]
		switch {
		case x.met(pod, seen):
			delete(e.pending[key], name)
		case now.Sub(x.since) > timeout:
			stale = true
		default:
			wait = true
		}
	}
	for name, o := range e.opens[key] {
		pod, seen := pods[name]
		if !seen || o.met(pod) || now.Sub(o.since) > timeout {
			delete(e.opens[key], name)
		}
	}
	e.dropEmpty(key)
	return wait, stale
}

// dropEmpty removes key's maps once they are empty: a map keeps the room it grew to (a 10,000-pod
// scale-up's, 3 MB) until it is dropped.
func (e *Expectations) dropEmpty(key string) {
	if m, ok := e.pending[key]; ok && len(m) == 0 {
		delete(e.pending, key)
	}
	if m, ok := e.opens[key]; ok && len(m) == 0 {
		delete(e.opens, key)
	}
}

// met reports whether pod (seen: whether it exists at all) shows the write.
func (x expectation) met(pod *corev1.Pod, seen bool) bool {
	switch x.kind {
	case "create":
		return seen
	case "delete":
		return !seen || pod.DeletionTimestamp != nil
	case "update":
		return !seen || inplace.AtRevision(pod.Labels[inplace.RevisionLabel], x.revision)
	case "batch":
		return !seen || pod.Annotations[appspub.InPlaceUpdateStateKey] != x.revision
	case "lifecycle":
		return !seen || pod.Labels[appspub.LifecycleStateKey] == x.revision
	case "resume":
		return !seen || pod.Annotations[appspub.InPlaceUpdateGraceKey] == ""
	case "annotation":
		return !seen || pod.Annotations[x.key] == x.revision
	}
	return false
}

// Expected reports whether a write to pod of key is pending, and since when it has been (or was
// last confirmed against the API server).
func (e *Expectations) Expected(key, pod string) (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.pending[key][pod]
	return x.since, ok
}
