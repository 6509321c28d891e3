package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// replicaHistory is when each workload was asked for how many replicas: the driver, their only
// writer, records a change before it sends it (so the checker never sees Kruise act on a change it
// has not heard of).
type replicaHistory struct {
	mu      sync.Mutex
	samples map[string][]replicaSample
}

type replicaSample struct {
	at       time.Time
	replicas int32
}

func newReplicaHistory(now time.Time) *replicaHistory {
	h := &replicaHistory{samples: map[string][]replicaSample{}}
	for _, w := range world {
		if w.Scalable {
			h.record(w.Name, initialReplicas(w), now)
		}
	}
	return h
}

func (h *replicaHistory) record(name string, replicas int32, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples[name] = append(h.samples[name], replicaSample{at: at, replicas: replicas})
}

// inWindow are the values asked within window before now: the one in force at its start, and
// every later one.
func (h *replicaHistory) inWindow(name string, window time.Duration) []replicaSample {
	h.mu.Lock()
	defer h.mu.Unlock()
	all := h.samples[name]
	start := time.Now().Add(-window)
	i := len(all) - 1
	for i > 0 && all[i].at.After(start) {
		i--
	}
	if i < 0 {
		return nil
	}
	return append([]replicaSample(nil), all[i:]...)
}

// min is the fewest replicas asked within window.
func (h *replicaHistory) min(name string, window time.Duration) (int32, bool) {
	s := h.inWindow(name, window)
	if len(s) == 0 {
		return 0, false
	}
	m := s[0].replicas
	for _, v := range s[1:] {
		m = min(m, v.replicas)
	}
	return m, true
}

// max is the most replicas asked within window.
func (h *replicaHistory) max(name string, window time.Duration) (int32, bool) {
	s := h.inWindow(name, window)
	if len(s) == 0 {
		return 0, false
	}
	m := s[0].replicas
	for _, v := range s[1:] {
		m = max(m, v.replicas)
	}
	return m, true
}

func (h *replicaHistory) describe(name string, window time.Duration) string {
	var out []string
	for _, s := range h.inWindow(name, window) {
		out = append(out, fmt.Sprintf("%d at %s", s.replicas, s.at.Format("15:04:05.000")))
	}
	return strings.Join(out, ", ")
}
