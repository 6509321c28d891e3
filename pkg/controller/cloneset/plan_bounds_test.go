package cloneset

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
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

// A pod Ready but still in PreparingNormal (no hook holds it; the manager was down when it became
// Ready) serves traffic: updating it costs the maxUnavailable budget (soak seed 3).
func TestReadyPodsStillPreparingNormalCostTheBudget(t *testing.T) {
	preparingNormal := func(p *PodFacts) {
		p.Lifecycle, p.PreNormalReleased = appspub.LifecycleStatePreparingNormal, true
	}
	plan := Compute(cs(3, maxUnavailable("1"), pods("p", "v1", 3, preparingNormal)), t0, Options{})
	if len(plan.Updates) != 1 || plan.Updates[0].Unpaid {
		t.Fatalf("updates = %v, want 1, paid for: the three pods are Ready and serving", plan.Updates)
	}
	held := func(p *PodFacts) { p.Lifecycle = appspub.LifecycleStatePreparingNormal }
	plan = Compute(cs(3, maxUnavailable("1"), pods("p", "v1", 3, held)), t0, Options{})
	if len(plan.Updates) != 3 || !plan.Updates[0].Unpaid || !plan.Updates[2].Unpaid {
		t.Fatalf("updates = %v, want 3, unpaid: pods a preNormal hook holds are not available, their updates cost nothing", plan.Updates)
	}
}
