package statefulset

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// Parallel creates at most podcontrol.MaxCreatesPerReconcile pods per plan, the lowest missing
// ordinals first, and says how many wait; the pods' events bring the next plan.
func TestParallelCreatesAtMostABurst(t *testing.T) {
	p := Compute(snap(spec(2000, appsv1.ParallelPodManagement), healthyPod(3, "web-new")), t0)
	got := createdOrds(p)
	if len(got) != podcontrol.MaxCreatesPerReconcile || got[0] != 0 || got[3] != 4 || got[len(got)-1] != podcontrol.MaxCreatesPerReconcile {
		t.Fatalf("created %d pods, %v…%v; want %d from 0, skipping 3", len(got), got[:4], got[len(got)-1], podcontrol.MaxCreatesPerReconcile)
	}
	if want := "at most 500 pods are created per reconcile: 1499 more wait, from web-501"; !slices.Contains(p.Notes, want) {
		t.Errorf("notes %q, want %q", p.Notes, want)
	}
}

// The pods scaleStrategy.maxUnavailable holds back are one note, not one per pod.
func TestParallelWaitingCreationsAreOneNote(t *testing.T) {
	s := spec(1000, appsv1.ParallelPodManagement, func(s *v1beta1.StatefulSetSpec) {
		s.ScaleStrategy = &v1beta1.StatefulSetScaleStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(2))}
	})
	p := Compute(snap(s), t0)
	if got := createdOrds(p); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("created %v, want [0 1]", got)
	}
	if len(p.Notes) != 1 || p.Notes[0] != "scaleStrategy.maxUnavailable: 998 missing pods wait to be created, from web-2" {
		t.Errorf("notes %q", p.Notes)
	}
}

// Reserved ranges are skipped as wholes and positions count only replicas: with 0-99999
// reserved, the first replica is 100000 and partition 1 keeps it.
func TestWideReservedRangesAndPartition(t *testing.T) {
	s := snap(spec(3, appsv1.ParallelPodManagement, partition(1), maxUnavailable(intstr.FromInt32(3))),
		healthyPod(100000, "web-old"), healthyPod(100001, "web-old"), healthyPod(100002, "web-old"), healthyPod(5, "web-old"))
	s.Reserved = ordinal.NewReserved(ordinal.Interval{First: 0, Last: 99999})
	p := Compute(s, t0)
	if got := updated(p); !slices.Equal(got, []string{"web-100002", "web-100001"}) {
		t.Errorf("updates %v, want [web-100002 web-100001]", got)
	}
	if got := deleted(p); len(got) != 1 || got[0] != "web-5" || !strings.Contains(p.Deletes[0].Reason, "reserved") {
		t.Errorf("deletes %+v, want web-5 (reserved)", p.Deletes)
	}
}
