package workloadspread

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/workloadspread"
)

// maxAttempts bounds the status writes of one admission that meet a conflict.
const maxAttempts = 5

// record decides on the subset statuses of version (workloadspread.InitialStatuses when the status
// has none for it) and writes the decision's change, if any, with the spread's resourceVersion: on
// a conflict it decides again on a fresh read. A dry run decides without writing.
func (h *Handler) record(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, version string, dryRun bool,
	decide func([]workloadspread.Slot) workloadspread.Decision) error {
	key := ws.Namespace + "/" + ws.Name
	mu, _ := h.locks.LoadOrStore(key, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	ws = ws.DeepCopy()
	if last, ok := h.written.Load(key); ok && newer(last.(*appsv1alpha1.WorkloadSpread), ws) {
		ws = last.(*appsv1alpha1.WorkloadSpread).DeepCopy() // the cache has not shown our last write yet
	}
	for attempt := 1; ; attempt++ {
		statuses := ws.Status.VersionedSubsetStatuses[version]
		if len(statuses) == 0 {
			replicas, err := h.replicas(ctx, ws)
			if err != nil {
				return err
			}
			statuses = workloadspread.InitialStatuses(ws.Spec.Subsets, replicas)
		}
		d := decide(workloadspread.SlotsFrom(ws.Spec.Subsets, statuses))
		if d.Change == nil || dryRun {
			return nil
		}
		if ws.Status.VersionedSubsetStatuses == nil {
			ws.Status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{}
		}
		ws.Status.VersionedSubsetStatuses[version] = d.Change.Apply(statuses, h.Clock.Now())
		err := h.Writer.Status().Update(ctx, ws)
		switch {
		case err == nil:
			h.written.Store(key, ws.DeepCopy())
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
