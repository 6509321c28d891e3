package cloneset

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// replicas 2^31-1 (the scale subresource reaches no webhook) plans one burst of creations, in
// memory for the burst, and says how many more wait.
func TestCreationsAreBoundedPerPlan(t *testing.T) {
	var before, after runtime.MemStats
	snap := cs(math.MaxInt32, pods("p", "v2", 3))
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := Compute(snap, t0, Options{})
	runtime.ReadMemStats(&after)
	if len(p.Creates) != podcontrol.MaxCreatesPerReconcile {
		t.Errorf("%d creations, want %d", len(p.Creates), podcontrol.MaxCreatesPerReconcile)
	}
	if used := after.TotalAlloc - before.TotalAlloc; used > 1<<20 {
		t.Errorf("planning replicas 2^31-1 allocated %d KiB, want < 1 MiB", used>>10)
	}
	want := "at most 500 pods are created per reconcile: 2147483144 more wait"
	if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, want) }) {
		t.Errorf("notes %q, want %q", p.Notes, want)
	}
}
