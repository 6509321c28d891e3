package podcontrol

import (
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// WaitReporter turns a plan's waits and refusals into events, once per change of reason: a
// workload that waits for the same reason across many reconciles gets one event, not one per
// reconcile, and a rollout whose counts move ("3 unavailable" then "2 unavailable") costs no event
// per step. The zero WaitReporter is ready to use.
type WaitReporter struct {
	mu   sync.Mutex
	last map[string]reported // workload key → what was last reported
}

type reported struct{ refused, waits string }

// Report emits refused (Warning InPlaceUpdateRefused) and the waits joined (Normal
// UpdateWaiting) on obj when they differ from what was last reported for key.
func (w *WaitReporter) Report(rec events.EventRecorder, obj runtime.Object, key, refused string, waits []string) {
	now := reported{refused: refused, waits: strings.Join(waits, "; ")}
	w.mu.Lock()
	if w.last == nil {
		w.last = map[string]reported{}
	}
	prev := w.last[key]
	w.last[key] = now
	w.mu.Unlock()
	if rec == nil {
		return
	}
	if now.refused != "" && now.refused != prev.refused {
		rec.Eventf(obj, nil, corev1.EventTypeWarning, "InPlaceUpdateRefused", "InPlaceUpdateRefused", "%s", now.refused)
	}
	if now.waits != "" && shape(now.waits) != shape(prev.waits) {
		rec.Eventf(obj, nil, corev1.EventTypeNormal, "UpdateWaiting", "UpdateWaiting", "%s", now.waits)
	}
}

// Forget drops what was reported for a deleted workload.
func (w *WaitReporter) Forget(key string) {
	w.mu.Lock()
	delete(w.last, key)
	w.mu.Unlock()
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

// Refusal is a pod that needs an update its workload's policy does not allow (InPlaceOnly and a
// change that cannot be applied in place): the pod is left alone, and the refusal reported.
type Refusal struct {
	Pod    string
	Reason string
}

// RefusalMessage says which pods keep (e.g. "revision r1") and are not deleted, why (the first
// refusal's reason) and what remedy the user has; "" without refusals.
func RefusalMessage(refusals []Refusal, keep, remedy string) string {
	if len(refusals) == 0 {
		return ""
	}
	names := make([]string, 0, len(refusals))
	for _, r := range refusals {
		names = append(names, r.Pod)
	}
	return fmt.Sprintf("%d pod(s) (%s) keep %s and are not deleted: %s; %s", len(refusals), ListNames(names, 3), keep, refusals[0].Reason, remedy)
}
