package cloneset

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

func TestStatusPacing(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	mid := v1alpha1.CloneSetStatus{ObservedGeneration: 2, Replicas: 10, ReadyReplicas: 8, AvailableReplicas: 8, UpdatedReplicas: 4,
		UpdatedReadyReplicas: 2, ExpectedUpdatedReplicas: 10, UpdateRevision: "r2", CurrentRevision: "r1"}
	mid.CollisionCount = ptr.To[int32](0)
	var p podcontrol.StatusPacer
	p.Wrote("ns/web", now)

	moved := mid
	moved.UpdatedReplicas, moved.UpdatedReadyReplicas = 6, 4
	moved.CollisionCount = ptr.To[int32](0) // equal value, another pointer: as every reconcile computes it
	if d := p.Wait("ns/web", significant(&mid, &moved, 10), now.Add(300*time.Millisecond)); d != 700*time.Millisecond {
		t.Errorf("counters moved 300ms after a write: wait %v, want 700ms", d)
	}
	scaled := moved
	scaled.Replicas = 9 // a scale in progress is progress too
	if d := p.Wait("ns/web", significant(&mid, &scaled, 10), now.Add(300*time.Millisecond)); d != 700*time.Millisecond {
		t.Errorf("replicas moved 300ms after a write: wait %v, want 700ms", d)
	}
	if d := p.Wait("ns/web", significant(&mid, &moved, 10), now.Add(2*time.Second)); d != 0 {
		t.Errorf("counters moved 2s after a write: wait %v, want 0", d)
	}
	for name, next := range map[string]v1alpha1.CloneSetStatus{
		"new generation observed": func() v1alpha1.CloneSetStatus { s := mid; s.ObservedGeneration = 3; return s }(),
		"revision changed":        func() v1alpha1.CloneSetStatus { s := mid; s.UpdateRevision = "r3"; return s }(),
		"rollout settled": func() v1alpha1.CloneSetStatus {
			s := mid
			s.ReadyReplicas, s.AvailableReplicas, s.UpdatedReplicas, s.UpdatedReadyReplicas = 10, 10, 10, 10
			return s
		}(),
	} {
		if d := p.Wait("ns/web", significant(&mid, &next, 10), now.Add(time.Millisecond)); d != 0 {
			t.Errorf("%s: held back %v; must be written at once", name, d)
		}
	}
}
