package statefulset

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

func TestOrderedReadyCreatesOneAtATimeAscending(t *testing.T) {
	s := snap(spec(3, appsv1.OrderedReadyPodManagement))
	if got := createdOrds(Compute(s, t0)); !slices.Equal(got, []int{0}) {
		t.Fatalf("empty set: creates %v, want [0]", got)
	}
	starting := healthyPod(0, "web-new")
	starting.Ready = false
	s = snap(spec(3, appsv1.OrderedReadyPodManagement), starting)
	if p := Compute(s, t0); len(p.Creates) != 0 || len(p.Notes) == 0 {
		t.Fatalf("pod 0 not ready: creates %v notes %v, want none and a note", createdOrds(p), p.Notes)
	}
	s = snap(spec(3, appsv1.OrderedReadyPodManagement), healthyPod(0, "web-new"))
	if got := createdOrds(Compute(s, t0)); !slices.Equal(got, []int{1}) {
		t.Errorf("pod 0 healthy: creates %v, want [1]", got)
	}
}

func TestParallelCreatesAllWithinScaleMaxUnavailable(t *testing.T) {
	s := snap(spec(5, appsv1.ParallelPodManagement))
	if got := createdOrds(Compute(s, t0)); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("creates %v, want all five", got)
	}
	bounded := spec(5, appsv1.ParallelPodManagement, func(s *v1beta1.StatefulSetSpec) {
		s.ScaleStrategy = &v1beta1.StatefulSetScaleStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(2))}
	})
	starting := healthyPod(0, "web-new")
	starting.Ready = false
	if got := createdOrds(Compute(snap(bounded, starting), t0)); !slices.Equal(got, []int{1}) {
		t.Errorf("maxUnavailable 2 with one pod starting: creates %v, want [1]", got)
	}
}

func TestReserveOrdinalsAndStart(t *testing.T) {
	s := spec(3, appsv1.ParallelPodManagement, func(s *v1beta1.StatefulSetSpec) {
		s.ReserveOrdinals = []intstr.IntOrString{intstr.FromInt32(1)}
		s.Ordinals = &appsv1.StatefulSetOrdinals{Start: 0}
	})
	sn := snap(s, healthyPod(0, "web-new"), healthyPod(1, "web-new"), healthyPod(2, "web-new"))
	sn.Reserved = reserved(1)
	p := Compute(sn, t0)
	if got := createdOrds(p); !slices.Equal(got, []int{3}) {
		t.Errorf("creates %v, want [3] (1 reserved, the range extends)", got)
	}
	if got := deleted(p); !slices.Equal(got, []string{"web-1"}) {
		t.Errorf("deletes %v, want [web-1] (its ordinal is reserved)", got)
	}
}

func TestScaleInDescendingOneAtATime(t *testing.T) {
	pods := []PodFacts{healthyPod(0, "web-new"), healthyPod(1, "web-new"), healthyPod(2, "web-new"), healthyPod(3, "web-new")}
	if got := deleted(Compute(snap(spec(2, appsv1.OrderedReadyPodManagement), pods...), t0)); !slices.Equal(got, []string{"web-3"}) {
		t.Errorf("OrderedReady scale 4 → 2: deletes %v, want [web-3]", got)
	}
	if got := deleted(Compute(snap(spec(2, appsv1.ParallelPodManagement), pods...), t0)); !slices.Equal(got, []string{"web-3", "web-2"}) {
		t.Errorf("Parallel scale 4 → 2: deletes %v, want [web-3 web-2]", got)
	}
	unready := slices.Clone(pods)
	unready[0].Ready = false
	if got := deleted(Compute(snap(spec(2, appsv1.OrderedReadyPodManagement), unready...), t0)); len(got) != 0 {
		t.Errorf("OrderedReady with web-0 unready: deletes %v, want none", got)
	}
}

func TestFinishedPodsAreReplaced(t *testing.T) {
	for _, phase := range []corev1.PodPhase{corev1.PodFailed, corev1.PodSucceeded} {
		done := healthyPod(1, "web-new")
		done.Phase, done.Ready = phase, false
		p := Compute(snap(spec(2, appsv1.ParallelPodManagement), healthyPod(0, "web-new"), done), t0)
		if got := deleted(p); !slices.Equal(got, []string{"web-1"}) {
			t.Errorf("%s pod: deletes %v, want [web-1]", phase, got)
		}
	}
}

func TestRollingUpdateOrderPartitionAndMaxUnavailable(t *testing.T) {
	pods := []PodFacts{healthyPod(0, "web-old"), healthyPod(1, "web-old"), healthyPod(2, "web-old"), healthyPod(3, "web-old")}
	s := snap(spec(4, appsv1.OrderedReadyPodManagement, podPolicy(v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy)), pods...)
	p := Compute(s, t0)
	if got := updated(p); !slices.Equal(got, []string{"web-3"}) || p.Updates[0].Mode != UpdateInPlace {
		t.Errorf("maxUnavailable 1: updates %v, want web-3 in place", p.Updates)
	}
	s = snap(spec(4, appsv1.ParallelPodManagement, partition(1), maxUnavailable(intstr.FromString("50%"))), pods...)
	if got := updated(Compute(s, t0)); !slices.Equal(got, []string{"web-3", "web-2"}) {
		t.Errorf("maxUnavailable 50%%, ReCreate: updates %v, want [web-3 web-2]", got)
	}
	s = snap(spec(4, appsv1.ParallelPodManagement, partition(3), maxUnavailable(intstr.FromInt32(4))), pods...)
	if got := updated(Compute(s, t0)); !slices.Equal(got, []string{"web-3"}) {
		t.Errorf("partition 3: updates %v, want [web-3]", got)
	}
	s = snap(spec(4, appsv1.ParallelPodManagement, func(s *v1beta1.StatefulSetSpec) { s.UpdateStrategy.RollingUpdate.Paused = true }), pods...)
	if got := updated(Compute(s, t0)); len(got) != 0 {
		t.Errorf("paused: updates %v", got)
	}
	s = snap(spec(4, appsv1.ParallelPodManagement, func(s *v1beta1.StatefulSetSpec) {
		s.UpdateStrategy = v1beta1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	}), pods...)
	if got := updated(Compute(s, t0)); len(got) != 0 {
		t.Errorf("OnDelete: updates %v", got)
	}
}

func TestPartitionSkipsReservedOrdinals(t *testing.T) {
	// Replicas 0, 2, 3 (1 reserved): partition 1 keeps the first replica, ordinal 0.
	s := snap(spec(3, appsv1.ParallelPodManagement, partition(1), maxUnavailable(intstr.FromInt32(3))),
		healthyPod(0, "web-old"), healthyPod(2, "web-old"), healthyPod(3, "web-old"))
	s.Reserved = reserved(1)
	if got := updated(Compute(s, t0)); !slices.Equal(got, []string{"web-3", "web-2"}) {
		t.Errorf("updates %v, want [web-3 web-2]", got)
	}
}

func TestInPlaceOnlyRefusesARecreate(t *testing.T) {
	s := snap(spec(1, appsv1.OrderedReadyPodManagement, podPolicy(v1beta1.InPlaceOnlyStatefulSetPodUpdatePolicy)), healthyPod(0, "web-old"))
	s.InPlace["web-old"] = inplace.Decision{RecreateReasons: []string{"spec.volumes changed"}}
	p := Compute(s, t0)
	if len(p.Updates) != 0 || len(p.Refusals) != 1 {
		t.Errorf("updates %v refusals %v, want one refusal", p.Updates, p.Refusals)
	}
	s.Spec.UpdateStrategy.RollingUpdate.PodUpdatePolicy = v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy
	if p := Compute(s, t0); len(p.Updates) != 1 || p.Updates[0].Mode != UpdateRecreate {
		t.Errorf("InPlaceIfPossible, not possible: %v, want a recreate", p.Updates)
	}
}

func TestMinReadySecondsWakesThePlan(t *testing.T) {
	s := spec(2, appsv1.OrderedReadyPodManagement, func(s *v1beta1.StatefulSetSpec) {
		s.UpdateStrategy.RollingUpdate.MinReadySeconds = ptr.To(int32(10))
	})
	fresh := healthyPod(0, "web-new")
	fresh.ReadySince = t0.Add(-3 * time.Second)
	p := Compute(snap(s, fresh), t0)
	if len(p.Creates) != 0 || !p.Next.Equal(t0.Add(7*time.Second)) {
		t.Errorf("creates %v next %v, want none until %v", createdOrds(p), p.Next, t0.Add(7*time.Second))
	}
}

func TestUnorderedUpdateKeepsPartitionPods(t *testing.T) {
	s := spec(4, appsv1.ParallelPodManagement, partition(1), maxUnavailable(intstr.FromInt32(4)), func(s *v1beta1.StatefulSetSpec) {
		s.UpdateStrategy.RollingUpdate.UnorderedUpdate = &v1beta1.StatefulSetUnorderedUpdateStrategy{}
	})
	pods := []PodFacts{healthyPod(0, "web-old"), healthyPod(1, "web-old"), healthyPod(2, "web-old"), healthyPod(3, "web-old")}
	if got := updated(Compute(snap(s, pods...), t0)); len(got) != 3 {
		t.Errorf("updates %v, want 3 (one kept by the partition)", got)
	}
}

// The broken-pod trap (kubernetes#67250): an OrderedReady set whose old pod never becomes ready
// updates it instead of waiting for it.
func TestOrderedReadyUpdatesABrokenOldPod(t *testing.T) {
	broken := healthyPod(1, "web-old")
	broken.Ready = false
	s := snap(spec(3, appsv1.OrderedReadyPodManagement, podPolicy(v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy)),
		healthyPod(0, "web-old"), broken, healthyPod(2, "web-old"))
	p := Compute(s, t0)
	if got := updated(p); !slices.Equal(got, []string{"web-1"}) {
		t.Errorf("updates %v, want [web-1]: the broken pod first, at no cost", got)
	}
	// At the update revision, a pod that is not ready is waited for (nothing to fix by updating).
	s = snap(spec(3, appsv1.OrderedReadyPodManagement), healthyPod(0, "web-new"), func() PodFacts {
		p := healthyPod(1, "web-new")
		p.Ready = false
		return p
	}(), healthyPod(2, "web-old"))
	if p := Compute(s, t0); len(p.Updates)+len(p.Creates)+len(p.Deletes) != 0 {
		t.Errorf("plan %+v, want a wait for web-1", p)
	}
}

func TestLifecycleHooksHoldDeletesAndUpdates(t *testing.T) {
	hooks := func(s *v1beta1.StatefulSetSpec) {
		s.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{LabelsHandler: map[string]string{"hold": "true"}},
			InPlaceUpdate: &appspub.LifecycleHook{LabelsHandler: map[string]string{"hold": "true"}, MarkPodNotReady: true}}
	}
	held := func(ord int, rev string) PodFacts {
		p := healthyPod(ord, rev)
		p.PreDeleteHeld, p.PreUpdateHeld, p.Lifecycle = true, true, appspub.LifecycleStateNormal
		return p
	}
	p := Compute(snap(spec(1, appsv1.ParallelPodManagement, hooks), healthyPod(0, "web-new"), held(1, "web-new")), t0)
	if len(p.Deletes) != 0 || len(p.Lifecycle) != 1 || p.Lifecycle[0].To != appspub.LifecycleStatePreparingDelete {
		t.Errorf("scale-in of a held pod: deletes %v lifecycle %+v, want PreparingDelete", p.Deletes, p.Lifecycle)
	}
	p = Compute(snap(spec(1, appsv1.ParallelPodManagement, hooks, podPolicy(v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy)), held(0, "web-old")), t0)
	if len(p.Updates) != 0 || len(p.Lifecycle) != 1 || p.Lifecycle[0].To != appspub.LifecycleStatePreparingUpdate || !p.Lifecycle[0].MarkNotReady {
		t.Errorf("update of a held pod: updates %v lifecycle %+v, want PreparingUpdate, not ready", p.Updates, p.Lifecycle)
	}
	released := healthyPod(0, "web-old")
	released.Lifecycle, released.Ready = appspub.LifecycleStatePreparingUpdate, true
	p = Compute(snap(spec(1, appsv1.OrderedReadyPodManagement, hooks, podPolicy(v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy)), released), t0)
	if got := updated(p); !slices.Equal(got, []string{"web-0"}) {
		t.Errorf("released from PreparingUpdate: updates %v, want web-0 (OrderedReady does not wait for it)", got)
	}
	done := healthyPod(0, "web-new")
	done.Lifecycle, done.UpdatedReleased = appspub.LifecycleStateUpdating, true
	p = Compute(snap(spec(1, appsv1.OrderedReadyPodManagement, hooks), done), t0)
	if len(p.Lifecycle) != 1 || p.Lifecycle[0].To != appspub.LifecycleStateNormal {
		t.Errorf("update done: lifecycle %+v, want Normal", p.Lifecycle)
	}
}

func TestSpecifiedDeleteRecreatesTheOrdinal(t *testing.T) {
	marked := healthyPod(1, "web-new")
	marked.SpecifiedDelete = true
	p := Compute(snap(spec(3, appsv1.OrderedReadyPodManagement), healthyPod(0, "web-new"), marked, healthyPod(2, "web-new")), t0)
	if got := deleted(p); !slices.Equal(got, []string{"web-1"}) {
		t.Errorf("deletes %v, want [web-1]", got)
	}
}

// B2: a claim-template-only change expands the claims of one pod at a time (maxUnavailable 1),
// from the highest ordinal, without updating (or restarting) any pod.
func TestClaimOnlyChangeExpandsOnePodAtATime(t *testing.T) {
	behind := func(ord int) PodFacts {
		p := healthyPod(ord, "web-new")
		p.ClaimsBehind = true
		return p
	}
	s := snap(spec(3, appsv1.OrderedReadyPodManagement), behind(0), behind(1), behind(2))
	p := Compute(s, t0)
	if !slices.Equal(p.Expands, []string{"web-2"}) || len(p.Updates) != 0 {
		t.Errorf("expands %v updates %v, want web-2 only", p.Expands, p.Updates)
	}
	resizing := healthyPod(2, "web-new")
	resizing.ClaimsResizing = true
	s = snap(spec(3, appsv1.OrderedReadyPodManagement), behind(0), behind(1), resizing)
	if p := Compute(s, t0); len(p.Expands) != 0 {
		t.Errorf("while web-2 resizes: expands %v, want none", p.Expands)
	}
	s = snap(spec(3, appsv1.OrderedReadyPodManagement, partition(2)), behind(0), behind(1), healthyPod(2, "web-new"))
	if p := Compute(s, t0); len(p.Expands) != 0 {
		t.Errorf("below the partition: expands %v, want none", p.Expands)
	}
}

// A pod whose in-place update to an older revision never completed (a bad image) is updated again.
func TestStuckInPlaceUpdateIsUpdatedAgain(t *testing.T) {
	stuck := healthyPod(2, "web-old")
	stuck.Ready, stuck.InPlaceUpdating = false, true
	s := snap(spec(3, appsv1.OrderedReadyPodManagement, podPolicy(v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy)),
		healthyPod(0, "web-old"), healthyPod(1, "web-old"), stuck)
	if got := updated(Compute(s, t0)); !slices.Equal(got, []string{"web-2"}) {
		t.Errorf("updates %v, want [web-2]", got)
	}
}
