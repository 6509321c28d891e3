package cloneset

import (
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// waitReporter turns a plan's waits and refusals into events, once per change of reason: a CloneSet
// that waits for the same reason across many reconciles gets one event, not one per reconcile, and
// a rollout whose counts move ("3 unavailable" then "2 unavailable") costs no event per step.
type waitReporter struct {
	mu   sync.Mutex
	last map[string]reported // CloneSet key → what was last reported
}

type reported struct{ refused, waits string }

// report emits the plan's refusals (Warning InPlaceUpdateRefused) and waits (Normal UpdateWaiting)
// when they differ from what was last reported for key.
func (w *waitReporter) report(r *Reconciler, key string, cs *v1alpha1.CloneSet, plan Plan) {
	now := reported{refused: refusalMessage(cs, plan.Refusals), waits: strings.Join(plan.Notes, "; ")}
	w.mu.Lock()
	if w.last == nil {
		w.last = map[string]reported{}
	}
	prev := w.last[key]
	w.last[key] = now
	w.mu.Unlock()
	if now.refused != "" && now.refused != prev.refused {
		r.event(cs, corev1.EventTypeWarning, "InPlaceUpdateRefused", "%s", now.refused)
	}
	if now.waits != "" && shape(now.waits) != shape(prev.waits) {
		r.event(cs, corev1.EventTypeNormal, "UpdateWaiting", "%s", now.waits)
	}
}

// forget drops what was reported for a deleted CloneSet.
func (w *waitReporter) forget(key string) {
	w.mu.Lock()
	delete(w.last, key)
	w.mu.Unlock()
}

// refusalMessage says which pods InPlaceOnly leaves on the old revision and why, or "".
func refusalMessage(cs *v1alpha1.CloneSet, refusals []Refusal) string {
	if len(refusals) == 0 {
		return ""
	}
	names := make([]string, 0, len(refusals))
	for _, r := range refusals {
		names = append(names, r.Pod)
	}
	return fmt.Sprintf("%d pod(s) (%s) keep revision %s and are not deleted: %s; revert the template or use updateStrategy.type InPlaceIfPossible or ReCreate",
		len(refusals), listNames(names, 3), cs.Status.CurrentRevision, refusals[0].Reason)
}

// shape is a message with its numbers blanked: the reason without the counts.
func shape(msg string) string {
	var b strings.Builder
	digits := false
	for _, c := range msg {
		if c >= '0' && c <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(c)
	}
	return b.String()
}

// batch collects one reconcile's successful pod writes so that each kind makes one event: a rollout
// step of 100 pods is one SuccessfulUpdatePodInPlace event naming them, not 100 events (events are
// API writes too). Failures stay one event each.
type batch struct {
	mu     sync.Mutex
	groups map[string]*batchGroup
	order  []string
}

type batchGroup struct {
	verb, detail string
	pods         []string
}

// add records that pod had the write reason (done = "created", "deleted", …); detail is the first
// pod's why, kept for the event.
func (b *batch) add(reason, done, pod, detail string) {
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

// flush emits one Normal event per kind of write.
func (b *batch) flush(r *Reconciler, cs *v1alpha1.CloneSet) {
	for _, reason := range b.order {
		g := b.groups[reason]
		r.event(cs, corev1.EventTypeNormal, reason, "%s %d pod(s) (%s): %s", g.verb, len(g.pods), listNames(g.pods, 5), g.detail)
	}
}

// listNames joins up to max names, then says how many more.
func listNames(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}
