package statefulset

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/platform/allocs"
)

// planBudget is the most bytes reading a spec and planning one step of it (ordinal.Bounded,
// Compute, ComputeStatus) may allocate with pods pods: a base that covers
// podcontrol.MaxCreatesPerReconcile creations and reserveOrdinals of ordinal.MaxReserveEntries
// entries, plus a share per existing pod -- never anything that grows with replicas or with the
// numbers in reserveOrdinals.
func planBudget(pods int) uint64 { return 256<<10 + uint64(pods)*4<<10 }

// fuzzEntries are count ranges of width ordinals from first, gap apart, then the comma-separated
// extra entries (digits: an integer entry; anything else: a string entry).
func fuzzEntries(count uint16, first, width, gap int32, extra string) []intstr.IntOrString {
	var out []intstr.IntOrString
	step := int64(max(width, 1)) + int64(max(gap, 0))
	for i := range int64(count % 2048) {
		lo := int64(max(first, 0)) + i*step
		out = append(out, intstr.FromString(strconv.FormatInt(lo, 10)+"-"+strconv.FormatInt(lo+int64(max(width, 1))-1, 10)))
	}
	for tok := range strings.SplitSeq(extra, ",") {
		if tok == "" {
			continue
		}
		if n, err := strconv.ParseInt(tok, 10, 32); err == nil {
			out = append(out, intstr.FromInt32(int32(n)))
		} else {
			out = append(out, intstr.FromString(tok))
		}
	}
	return out
}

// fuzzPods are n pods from ordinal start, spaced apart, of both revisions, some not ready.
func fuzzPods(n uint8, start, spaced int32) []PodFacts {
	pods := make([]PodFacts, 0, n%64)
	stride := 1 + int(max(spaced, 0))%1000
	for i := range int(n % 64) {
		rev := "web-old"
		if i%3 == 0 {
			rev = "web-new"
		}
		p := healthyPod(int(max(start, 0))+i*stride, rev)
		p.Ready = i%5 != 4
		pods = append(pods, p)
	}
	return pods
}

// FuzzPlan reads a spec built from the input as the controller does (ordinal.Bounded, then the
// planner and the status over a few pods) and fails when that allocates more than planBudget of the
// pods -- whatever replicas, ordinals.start and reserveOrdinals say. The seed corpus
// (testdata/fuzz/FuzzPlan) holds the attacks: 300 ranges of 100,000 ordinals, replicas 2^31-1, and
// the largest spec the bounds accept.
func FuzzPlan(f *testing.F) {
	f.Fuzz(func(t *testing.T, replicas, start int32, count uint16, first, width, gap int32, parallel bool, pods uint8, extra string) {
		policy := appsv1.OrderedReadyPodManagement
		if parallel {
			policy = appsv1.ParallelPodManagement
		}
		s := spec(replicas, policy, maxUnavailable(intstr.FromString("50%")))
		s.Ordinals = &appsv1.StatefulSetOrdinals{Start: start}
		s.ReserveOrdinals = fuzzEntries(count, first, width, gap, extra)
		facts := fuzzPods(pods, start, gap)
		var plan Plan
		var err error
		used := allocs.Bytes(func() {
			var r ordinal.Replicas
			if r, err = ordinal.Bounded(start, replicas, s.ReserveOrdinals); err != nil {
				return
			}
			sn := snap(s, facts...)
			sn.Reserved = r.Reserved()
			plan = Compute(sn, t0)
			_ = ComputeStatus(sn, t0, v1beta1.StatefulSetStatus{}, 1, "app=web", nil)
		})
		if used > planBudget(len(facts)) {
			t.Fatalf("replicas %d, start %d, %d reserveOrdinals entries, %d pods: allocated %d bytes, more than %d (refused: %v)",
				replicas, start, len(s.ReserveOrdinals), len(facts), used, planBudget(len(facts)), err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "spec.") {
				t.Fatalf("refusal %q names no field", err)
			}
			return
		}
		checkBoundedPlan(t, plan, replicas, facts)
	})
}

// checkBoundedPlan: a plan creates at most podcontrol.MaxCreatesPerReconcile pods, each of an
// ordinal without one, and never more than the replicas.
func checkBoundedPlan(t *testing.T, plan Plan, replicas int32, pods []PodFacts) {
	t.Helper()
	if len(plan.Creates) > podcontrol.MaxCreatesPerReconcile || len(plan.Creates) > int(max(replicas, 0)) {
		t.Fatalf("replicas %d: %d creations", replicas, len(plan.Creates))
	}
	for _, c := range plan.Creates {
		for _, p := range pods {
			if p.Ordinal == c.Ordinal {
				t.Fatalf("created ordinal %d, which has pod %s", c.Ordinal, p.Name)
			}
		}
	}
}

// TestPlanMemoryOfTheAttacks runs the attacks of the seed corpus as a plain test and prints what
// they allocate, so that `go test` shows the margin under planBudget.
func TestPlanMemoryOfTheAttacks(t *testing.T) {
	for _, c := range []struct {
		name            string
		replicas, start int32
		count           uint16
		width           int32
		pods            uint8
	}{
		{"300 ranges of 100000", 3, 0, 300, ordinal.MaxReservedRange, 3},
		{"replicas 2^31-1", math.MaxInt32, 0, 0, 0, 10},
		{"largest accepted, Parallel", ordinal.MaxReplicas, 0, ordinal.MaxReserveEntries, ordinal.MaxReservedOrdinals / ordinal.MaxReserveEntries, 63},
		{"largest accepted from 2^31-1", ordinal.MaxReplicas, math.MaxInt32, 0, 0, 63},
	} {
		s := spec(c.replicas, appsv1.ParallelPodManagement)
		s.ReserveOrdinals = fuzzEntries(c.count, 0, c.width, 1, "")
		facts := fuzzPods(c.pods, c.start, 1)
		began := time.Now()
		var plan Plan
		used := allocs.Bytes(func() {
			r, err := ordinal.Bounded(c.start, c.replicas, s.ReserveOrdinals)
			if err != nil {
				return
			}
			sn := snap(s, facts...)
			sn.Reserved = r.Reserved()
			plan = Compute(sn, t0)
		})
		t.Logf("%s: %d bytes for %d pods (budget %d), %d creations, %s", c.name, used, len(facts), planBudget(len(facts)), len(plan.Creates), time.Since(began)/3)
		if used > planBudget(len(facts)) {
			t.Errorf("%s: allocated %d bytes, more than %d", c.name, used, planBudget(len(facts)))
		}
	}
}
