package workloadspread

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/workloadspread"
)

// maxAttempts bounds the status writes of one batch that meet a conflict.
const maxAttempts = 5

// writeTimeout bounds a batch's status writes, whichever admission started them.
const writeTimeout = 10 * time.Second

// pending is one admission's decision, waiting to be written with those of the same spread that
// arrive meanwhile.
type pending struct {
	ws      *appsv1alpha1.WorkloadSpread
	version string
	decide  func([]workloadspread.Slot) workloadspread.Decision
	done    chan error
}

// queue holds a spread's pending decisions; one drainer at a time writes them.
type queue struct {
	mu       sync.Mutex
	waiting  []*pending
	draining bool
}

// record decides on the subset statuses of version (workloadspread.InitialStatuses when the status
// has none for it) and writes the decision's change, if any, with the spread's resourceVersion: on
// a conflict it decides again on a fresh read. A dry run decides without writing.
//
// The decisions of concurrent admissions of one spread are written together (group commit): while
// a write is in flight the next decisions queue, and the drainer decides them in arrival order on
// one copy of the status — each seeing the ones before it — and writes them in one update. A pod
// creation thus waits for at most one write in flight and its own batch's, not for every pod ahead
// of it, and the quota holds exactly as with one write per pod.
func (h *Handler) record(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, version string, dryRun bool,
	decide func([]workloadspread.Slot) workloadspread.Decision) error {
	key := ws.Namespace + "/" + ws.Name
	if dryRun {
		_, _, err := h.decideAll(ctx, h.latest(key, ws), []*pending{{version: version, decide: decide}})
		return err
	}
	qv, _ := h.queues.LoadOrStore(key, &queue{})
	q := qv.(*queue)
	p := &pending{ws: ws, version: version, decide: decide, done: make(chan error, 1)}
	q.mu.Lock()
	q.waiting = append(q.waiting, p)
	start := !q.draining
	q.draining = true
	q.mu.Unlock()
	if start {
		go h.drain(context.WithoutCancel(ctx), key, q)
	}
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain writes q's pending decisions, batch by batch, until none is left.
func (h *Handler) drain(ctx context.Context, key string, q *queue) {
	for {
		q.mu.Lock()
		batch := q.waiting
		q.waiting = nil
		if len(batch) == 0 {
			q.draining = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		err := h.write(wctx, key, batch)
		cancel()
		for _, p := range batch {
			p.done <- err
		}
	}
}

// write decides a batch on the freshest copy of the spread known here and writes the changes in
// one status update, deciding again on a fresh read after a conflict.
func (h *Handler) write(ctx context.Context, key string, batch []*pending) error {
	ws := batch[0].ws
	for _, p := range batch[1:] {
		if newer(p.ws, ws) {
			ws = p.ws
		}
	}
	ws = h.latest(key, ws)
	for attempt := 1; ; attempt++ {
		cur, changed, err := h.decideAll(ctx, ws, batch)
		if err != nil || !changed {
			return err
		}
		err = h.Writer.Status().Update(ctx, cur)
		switch {
		case err == nil:
			h.written.Store(key, cur.DeepCopy())
			return nil
		case apierrors.IsNotFound(err):
			return nil
		case !apierrors.IsConflict(err) || attempt >= maxAttempts:
			return fmt.Errorf("record pod in WorkloadSpread %s: %w", key, err)
		}
		fresh, err := h.liveGet(ctx, ws.Namespace, ws.Name)
		if err != nil || fresh == nil {
			return err
		}
		ws = fresh
	}
}

// decideAll runs the batch's decisions in order on a copy of ws, each on the statuses the ones
// before it left; it returns the copy and whether any decision changed it.
func (h *Handler) decideAll(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, batch []*pending) (*appsv1alpha1.WorkloadSpread, bool, error) {
	cur := ws.DeepCopy()
	changed := false
	for _, p := range batch {
		statuses := cur.Status.VersionedSubsetStatuses[p.version]
		if len(statuses) == 0 {
			replicas, err := h.replicas(ctx, cur)
			if err != nil {
				return nil, false, err
			}
			statuses = workloadspread.InitialStatuses(cur.Spec.Subsets, replicas)
		}
		d := p.decide(workloadspread.SlotsFrom(cur.Spec.Subsets, statuses))
		if d.Change == nil {
			continue
		}
		if cur.Status.VersionedSubsetStatuses == nil {
			cur.Status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{}
		}
		cur.Status.VersionedSubsetStatuses[p.version] = d.Change.Apply(statuses, h.Clock.Now())
		changed = true
	}
	return cur, changed, nil
}

// latest is ws, or the copy this handler last wrote when the cache has not shown it yet.
func (h *Handler) latest(key string, ws *appsv1alpha1.WorkloadSpread) *appsv1alpha1.WorkloadSpread {
	if last, ok := h.written.Load(key); ok && newer(last.(*appsv1alpha1.WorkloadSpread), ws) {
		return last.(*appsv1alpha1.WorkloadSpread)
	}
	return ws
}

// replicas is the workload replica count percentages refer to; 0 when no subset uses one.
func (h *Handler) replicas(ctx context.Context, ws *appsv1alpha1.WorkloadSpread) (int32, error) {
	percent := false
	for _, s := range ws.Spec.Subsets {
		percent = percent || (s.MaxReplicas != nil && s.MaxReplicas.Type == intstr.String)
	}
	if !percent {
		return 0, nil
	}
	w, err := Target(ctx, h.Finder, ws)
	if err != nil {
		return 0, err
	}
	return WorkloadReplicas(ctx, h.Reader, ws, w)
}

// newer reports whether a's resourceVersion is later than b's (both are etcd revisions).
func newer(a, b *appsv1alpha1.WorkloadSpread) bool {
	x, errA := strconv.ParseInt(a.ResourceVersion, 10, 64)
	y, errB := strconv.ParseInt(b.ResourceVersion, 10, 64)
	return errA == nil && errB == nil && x > y
}

// liveGet reads a spread from the API server (a list by name: list and watch are all the manager
// may do with spreads); nil when it does not exist.
func (h *Handler) liveGet(ctx context.Context, namespace, name string) (*appsv1alpha1.WorkloadSpread, error) {
	list := &appsv1alpha1.WorkloadSpreadList{}
	if err := h.Live.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{"metadata.name": name}); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return &list.Items[0], nil
}
