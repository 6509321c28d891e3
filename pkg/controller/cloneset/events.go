package cloneset

import (
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/podcontrol"
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
		len(refusals), podcontrol.ListNames(names, 3), cs.Status.CurrentRevision, refusals[0].Reason)
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
