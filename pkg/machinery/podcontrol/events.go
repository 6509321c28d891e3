package podcontrol

import (
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// Batch collects one reconcile's successful pod writes so that each kind makes one event: a rollout
// step of 100 pods is one SuccessfulUpdatePodInPlace event naming them, not 100 events (events are
// API writes too). Failures stay one event each. The zero Batch is ready to use.
type Batch struct {
	mu     sync.Mutex
	groups map[string]*batchGroup
	order  []string
}

type batchGroup struct {
	verb, detail string
	pods         []string
}

// Add records that pod had the write reason (done = "created", "deleted", …); detail is the first
// pod's why, kept for the event.
func (b *Batch) Add(reason, done, pod, detail string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.groups == nil {
		b.groups = map[string]*batchGroup{}
	}
	g := b.groups[reason]
	if g == nil {
		g = &batchGroup{verb: done, detail: detail}
		b.groups[reason] = g
		b.order = append(b.order, reason)
	}
	g.pods = append(g.pods, pod)
}

// Flush emits one Normal event per kind of write on obj.
func (b *Batch) Flush(rec events.EventRecorder, obj runtime.Object) {
	if rec == nil {
		return
	}
	for _, reason := range b.order {
		g := b.groups[reason]
		rec.Eventf(obj, nil, corev1.EventTypeNormal, reason, reason, "%s %d pod(s) (%s): %s", g.verb, len(g.pods), ListNames(g.pods, 5), g.detail)
	}
}

// ListNames joins up to max names, then says how many more.
func ListNames(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}
