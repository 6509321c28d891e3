package spreadplacement

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/platform/liveread"
)

// maxAttempts bounds the status writes of one batch that meet a conflict.
const maxAttempts = 5

// writeTimeout bounds a batch's status writes, whichever admission started them.
const writeTimeout = 10 * time.Second

// retryAfter is how long answered decisions whose write failed wait before the next attempt.
const retryAfter = time.Second

// pending is one admission's decision, written with those of the same spread that arrive
// meanwhile. Either it is decided already (change: decided from memory, replayed on the status
// the write starts from) or it is decided when written (decide, on the freshest status). Its
// admission waits on done unless that is nil (answered already).
type pending struct {
	ws      *appsv1alpha1.WorkloadSpread
	version string
	change  *spreadrules.Change
	decide  func([]spreadrules.Slot) spreadrules.Decision
	done    chan error
}

// queue is one spread's bookkeeping: the decisions not written yet, and what this handler knows
// of the spread beyond its cache.
type queue struct {
	mu       sync.Mutex
	waiting  []*pending
	inFlight []*pending // the batch being written
	draining bool
	// known is the freshest copy this handler wrote or read live; the cache may be newer.
	known *appsv1alpha1.WorkloadSpread
	// view is the newest persisted copy with every answered decision not yet written replayed on
	// it: what a decision from memory reads. It is rebuilt when the copy underneath changes.
	view, viewBase *appsv1alpha1.WorkloadSpread
}

// record decides on the subset statuses of version (spreadrules.InitialStatuses when the status
// has none for it) and has the decision's change, if any, written into the spread's status.
//
// On the replica that decides (h.Decider: the leader, whose address the other replicas forward
// to) a creation is answered from memory: decided on the view — the status with every decision
// still unwritten replayed on it — and written behind, so no admission waits for a write. Every
// decision of the spread passes through this replica, so the view is never short of one and the
// quota holds exactly as with one write per pod.
//
// Elsewhere (no decider, or it cannot be reached) the decision is made when written, and the
// admission waits for the write: concurrent decisions of one spread are written together (group
// commit), decided in arrival order on one copy of the status, each seeing the ones before it, in
// one update under the spread's resourceVersion, decided again on a fresh read after a conflict.
// A dry run decides without writing.
//
// A release (a deletion or eviction: durable, true) is answered only once written, also on the
// deciding replica: the controller, which recounts a pod that is going away as gone, must not see
// it go before its release is in the status, or the released replica would be counted twice.
func (h *Handler) record(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, version string, dryRun, durable bool,
	decide func([]spreadrules.Slot) spreadrules.Decision) error {
	key := ws.Namespace + "/" + ws.Name
	q := h.queue(key)
	if dryRun {
		q.mu.Lock()
		base := q.latest(ws)
		q.mu.Unlock()
		_, _, err := h.decideAll(ctx, base, []*pending{{version: version, decide: decide}})
		return err
	}
	if h.Decider != nil && h.Decider.Deciding() {
		done, err := h.recordBehind(ctx, key, q, ws, version, durable, decide)
		if err != nil || done == nil {
			return err
		}
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p := &pending{ws: ws, version: version, decide: decide, done: make(chan error, 1)}
	q.mu.Lock()
	q.waiting = append(q.waiting, p)
	h.startDrain(ctx, key, q)
	q.mu.Unlock()
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recordBehind decides on q's view and queues the change for writing. It does not wait for the
// write unless durable: then it returns the channel the write's outcome arrives on.
func (h *Handler) recordBehind(ctx context.Context, key string, q *queue, ws *appsv1alpha1.WorkloadSpread, version string,
	durable bool, decide func([]spreadrules.Slot) spreadrules.Decision) (chan error, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.known == nil {
		// The first decision here since this replica began deciding: the previous decider's last
		// writes may not be in the cache yet.
		fresh, err := h.liveGet(ctx, ws.Namespace, ws.Name)
		if err != nil || fresh == nil {
			return nil, err
		}
		q.known = fresh
	}
	base := q.latest(ws)
	if q.viewBase == nil || q.viewBase.ResourceVersion != base.ResourceVersion {
		view, err := h.replayAll(ctx, base, slices.Concat(q.inFlight, q.waiting))
		if err != nil {
			return nil, err
		}
		q.view, q.viewBase = view, base
	}
	statuses, err := h.statusesOf(ctx, q.view, version)
	if err != nil {
		return nil, err
	}
	d := decide(spreadrules.SlotsFrom(q.view.Spec.Subsets, statuses))
	if d.Change == nil {
		return nil, nil
	}
	setStatuses(q.view, version, d.Change.Apply(statuses, h.Clock.Now()))
	p := &pending{ws: ws, version: version, change: d.Change}
	if durable {
		p.done = make(chan error, 1)
	}
	q.waiting = append(q.waiting, p)
	h.startDrain(ctx, key, q)
	return p.done, nil
}

// startDrain starts q's drainer unless one runs; q.mu is held.
func (h *Handler) startDrain(ctx context.Context, key string, q *queue) {
	if q.draining {
		return
	}
	q.draining = true
	go h.drain(context.WithoutCancel(ctx), key, q)
}

// drain writes q's pending decisions, batch by batch, until none is left. A batch of answered
// decisions whose write fails is kept and tried again: their pods are admitted already.
func (h *Handler) drain(ctx context.Context, key string, q *queue) {
	for {
		q.mu.Lock()
		batch := q.waiting
		q.waiting = nil
		q.inFlight = batch
		if len(batch) == 0 {
			q.draining = false
			q.mu.Unlock()
			return
		}
		base := q.latest(batch[0].ws)
		q.mu.Unlock()
		for _, p := range batch[1:] {
			if newer(p.ws, base) {
				base = p.ws
			}
		}
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		written, err := h.write(wctx, key, base, batch)
		cancel()
		q.mu.Lock()
		q.inFlight = nil
		if written != nil && (q.known == nil || !newer(q.known, written)) {
			q.known = written
		}
		var answered []*pending
		for _, p := range batch {
			if p.done != nil {
				p.done <- err
			} else if err != nil {
				answered = append(answered, p)
			}
		}
		if err != nil {
			// The view holds the durable decisions just refused: build it again without them.
			q.viewBase = nil
		}
		if len(answered) > 0 {
			log.FromContext(ctx).Error(err, "record admitted pods in the WorkloadSpread's status; retrying", "workloadSpread", key, "pods", len(answered))
			q.waiting = append(answered, q.waiting...)
		}
		q.mu.Unlock()
		if len(answered) > 0 {
			time.Sleep(retryAfter)
		}
	}
}

// write records a batch on the spread, starting from base: one status update, made again on a
// fresh read after a conflict. It returns the copy written, if any.
func (h *Handler) write(ctx context.Context, key string, base *appsv1alpha1.WorkloadSpread, batch []*pending) (*appsv1alpha1.WorkloadSpread, error) {
	ws := base
	for attempt := 1; ; attempt++ {
		cur, changed, err := h.decideAll(ctx, ws, batch)
		if err != nil || !changed {
			return nil, err
		}
		err = h.Writer.Status().Update(ctx, cur)
		switch {
		case err == nil:
			return cur.DeepCopy(), nil
		case apierrors.IsNotFound(err):
			return nil, nil
		case !apierrors.IsConflict(err) || attempt >= maxAttempts:
			return nil, fmt.Errorf("record pod in WorkloadSpread %s: %w", key, err)
		}
		fresh, err := h.liveGet(ctx, ws.Namespace, ws.Name)
		if err != nil || fresh == nil {
			return nil, err
		}
		ws = fresh
	}
}

// decideAll records the batch on a copy of ws: first the decisions answered already, replayed,
// then the others decided in arrival order, each on the statuses the ones before it left. It
// returns the copy and whether anything changed.
func (h *Handler) decideAll(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, batch []*pending) (*appsv1alpha1.WorkloadSpread, bool, error) {
	cur := ws.DeepCopy()
	changed := false
	for _, answered := range []bool{true, false} {
		for _, p := range batch {
			if (p.change != nil) != answered {
				continue
			}
			statuses, err := h.statusesOf(ctx, cur, p.version)
			if err != nil {
				return nil, false, err
			}
			slots := spreadrules.SlotsFrom(cur.Spec.Subsets, statuses)
			var c *spreadrules.Change
			if answered {
				c = spreadrules.Replay(slots, *p.change)
			} else {
				c = p.decide(slots).Change
			}
			if c == nil {
				continue
			}
			setStatuses(cur, p.version, c.Apply(statuses, h.Clock.Now()))
			changed = true
		}
	}
	return cur, changed, nil
}

// replayAll is a copy of ws with the answered decisions among ps replayed on it.
func (h *Handler) replayAll(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, ps []*pending) (*appsv1alpha1.WorkloadSpread, error) {
	answered := make([]*pending, 0, len(ps))
	for _, p := range ps {
		if p.change != nil {
			answered = append(answered, p)
		}
	}
	cur, _, err := h.decideAll(ctx, ws, answered)
	return cur, err
}

// statusesOf are ws's subset statuses of version, or the initial ones when it has none yet.
func (h *Handler) statusesOf(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, version string) ([]appsv1alpha1.WorkloadSpreadSubsetStatus, error) {
	if statuses := ws.Status.VersionedSubsetStatuses[version]; len(statuses) > 0 {
		return statuses, nil
	}
	replicas, err := h.replicas(ctx, ws)
	if err != nil {
		return nil, err
	}
	return spreadrules.InitialStatuses(ws.Spec.Subsets, replicas), nil
}

func setStatuses(ws *appsv1alpha1.WorkloadSpread, version string, statuses []appsv1alpha1.WorkloadSpreadSubsetStatus) {
	if ws.Status.VersionedSubsetStatuses == nil {
		ws.Status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{}
	}
	ws.Status.VersionedSubsetStatuses[version] = statuses
}

// queue is the bookkeeping of the spread key.
func (h *Handler) queue(key string) *queue {
	q, _ := h.queues.LoadOrStore(key, &queue{})
	return q.(*queue)
}

// latest is ws, or the copy q knows when the cache has not shown it yet; q.mu is held.
func (q *queue) latest(ws *appsv1alpha1.WorkloadSpread) *appsv1alpha1.WorkloadSpread {
	if q.known != nil && !newer(ws, q.known) {
		return q.known
	}
	return ws
}

// Flush waits until every decision answered here is written, or ctx ends: the decider's last act
// before another replica decides.
func (h *Handler) Flush(ctx context.Context) {
	for {
		idle := true
		h.queues.Range(func(_, v any) bool {
			q := v.(*queue)
			q.mu.Lock()
			idle = idle && !q.draining
			q.mu.Unlock()
			return idle
		})
		if idle {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
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
	w, err := workloadfinder.SpreadTarget(ctx, h.Finder, ws)
	if err != nil {
		return 0, err
	}
	return workloadfinder.SpreadReplicas(ctx, h.Reader, ws, w)
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
	ws, _, err := liveread.ByName[*appsv1alpha1.WorkloadSpread](ctx, h.Live, &appsv1alpha1.WorkloadSpreadList{}, namespace, name)
	return ws, err
}
