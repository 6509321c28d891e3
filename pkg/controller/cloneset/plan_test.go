package cloneset

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

type want struct {
	deletes     []string // in order; nil means none
	updates     []string // in order; nil means none
	createV1    int
	createV2    int
	note        string // substring of some note
	refusals    int
	modes       []UpdateMode
	deleteKinds []DeleteKind
}

func TestPlanRules(t *testing.T) {
	ip := v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
	only := v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
	cases := []struct {
		name string
		snap *Snapshot
		want want
	}{
		{"partition keeps that many pods at the old revision", cs(5, partition("3"), maxUnavailable("5"), pods("a", "v1", 5)),
			want{updates: []string{"a-0", "a-1"}, modes: []UpdateMode{UpdateRecreate, UpdateRecreate}, createV2: 2}},
		{"partition already reached: nothing to update", cs(5, partition("3"), pods("a", "v1", 3), pods("b", "v2", 2)),
			want{}},
		{"raising the partition rolls nothing back", cs(5, partition("5"), pods("a", "v1", 2), pods("b", "v2", 3)),
			want{}},
		{"maxUnavailable bounds the pods updated at once", cs(10, maxUnavailable("2"), updateType(ip), pods("a", "v1", 10)),
			want{updates: []string{"a-0", "a-1"}, note: "2 unavailable ≥ maxUnavailable 2"}},
		{"maxUnavailable default 20% rounds up", cs(3, updateType(ip), pods("a", "v1", 3)),
			want{updates: []string{"a-0"}}},
		{"not-ready pods are updated first and cost no budget", cs(5, maxUnavailable("1"), updateType(ip), pods("a", "v1", 4), pods("z", "v1", 1, notReady)),
			want{updates: []string{"z-0"}, note: "1 unavailable ≥ maxUnavailable 1"}},
		{"unavailable pods at the update revision count against maxUnavailable", cs(5, maxUnavailable("2"), pods("a", "v1", 3), pods("b", "v2", 2, notReady)),
			want{note: "2 unavailable ≥ maxUnavailable 2 (replicas 5, 3 available): 3 updates waiting"}},
		{"missing pods count as unavailable", cs(5, maxUnavailable("1"), pods("a", "v1", 4)),
			want{createV2: 1, note: "1 unavailable ≥ maxUnavailable 1"}},
		{"maxSurge creates update-revision pods first during an update", cs(3, maxSurge("1"), maxUnavailable("0"), pods("a", "v1", 3)),
			want{createV2: 1, note: "0 unavailable ≥ maxUnavailable 0"}},
		{"maxSurge never exceeds the pods left to update", cs(3, maxSurge("3"), maxUnavailable("0"), partition("2"), pods("a", "v1", 3)),
			want{createV2: 1}},
		{"maxSurge is not used by pure scaling", cs(5, maxSurge("2"), pods("b", "v2", 3)),
			want{createV2: 2}},
		{"surge pods are removed once the update is done", cs(3, maxSurge("1"), pods("b", "v2", 4)),
			want{deletes: []string{"b-0"}, deleteKinds: []DeleteKind{DeleteScaleIn}}},
		{"surge allows deleting an old pod once surge pods are available", cs(3, maxSurge("1"), maxUnavailable("0"), pods("a", "v1", 3), pods("b", "v2", 1)),
			want{updates: []string{"a-0"}, createV2: 1}},
		{"scale up creates update-revision pods", cs(4, pods("b", "v2", 2)),
			want{createV2: 2}},
		{"scale up creates current-revision pods to make up the partition", cs(5, partition("3"), pods("a", "v1", 2), pods("b", "v2", 2)),
			want{createV1: 1}},
		{"scale up beyond the partition creates update-revision pods", cs(7, partition("3"), pods("a", "v1", 3), pods("b", "v2", 2)),
			want{createV2: 2}},
		{"scaleStrategy.maxUnavailable bounds scale-up while pods are unavailable", cs(6, func(s *Snapshot) { s.Spec.ScaleStrategy.MaxUnavailable = ios("2") },
			pods("b", "v2", 1), pods("c", "v2", 1, notReady)),
			want{createV2: 1, note: "scaleStrategy.maxUnavailable 2"}},
		{"terminating pods are not counted as replicas", cs(3, pods("b", "v2", 2), pods("t", "v2", 1, terminating)),
			want{createV2: 1}},
		{"scale in deletes specified pods first", cs(2, pods("b", "v2", 2), pods("s", "v2", 1, specified, created(time.Hour*-5))),
			want{deletes: []string{"s-0"}, deleteKinds: []DeleteKind{DeleteScaleIn}}},
		{"scale in deletes unscheduled before not-ready before ready", cs(1, pods("b", "v2", 1), pods("n", "v2", 1, notReady), pods("u", "v2", 1, unscheduled)),
			want{deletes: []string{"u-0", "n-0"}}},
		{"scale in deletes lower pod-deletion-cost first", cs(2, pods("b", "v2", 1, cost(5)), pods("c", "v2", 1, cost(-1)), pods("d", "v2", 1, cost(1))),
			want{deletes: []string{"c-0"}}},
		{"scale in deletes pods on crowded nodes first", cs(3, pods("b", "v2", 2, onNode("n1")), pods("c", "v2", 1, onNode("n2")), pods("d", "v2", 1, onNode("n3"))),
			want{deletes: []string{"b-0"}}},
		{"scale in deletes newer pods first", cs(2, pods("b", "v2", 1, created(-time.Hour)), pods("c", "v2", 1, created(-time.Minute)), pods("d", "v2", 1, created(-time.Hour*3))),
			want{deletes: []string{"c-0"}}},
		{"scale in deletes old pods above the partition before updated pods", cs(3, partition("1"), paused, pods("a", "v1", 3), pods("b", "v2", 2, created(time.Minute))),
			want{deletes: []string{"a-0", "a-1"}}},
		{"scale in never deletes old pods below the partition", cs(3, partition("2"), pods("a", "v1", 2, created(time.Minute)), pods("b", "v2", 3)),
			want{deletes: []string{"b-0", "b-1"}}},
		{"a specified pod is replaced when replicas is unchanged", cs(3, pods("b", "v2", 2), pods("s", "v2", 1, specified)),
			want{deletes: []string{"s-0"}, deleteKinds: []DeleteKind{DeleteSpecified}, createV2: 1}},
		// The three maxSurge/maxUnavailable examples of the CloneSet user manual.
		{"specified delete within maxUnavailable 2 is immediate", cs(5, maxUnavailable("2"), maxSurge("1"), pods("a", "v2", 1, notReady), pods("b", "v2", 1, specified), pods("c", "v2", 3)),
			want{deletes: []string{"b-0"}, createV2: 1}},
		{"specified delete beyond maxUnavailable 1 surges first", cs(5, maxUnavailable("1"), maxSurge("1"), pods("a", "v2", 1, notReady), pods("b", "v2", 1, specified), pods("c", "v2", 3)),
			want{createV2: 1, note: "1 specified deletions waiting"}},
		{"specified delete of an unavailable pod is immediate", cs(5, maxUnavailable("1"), maxSurge("1"), pods("a", "v2", 1, notReady, specified), pods("c", "v2", 4)),
			want{deletes: []string{"a-0"}, createV2: 1}},
		{"paused updates nothing but still scales", cs(4, paused, maxUnavailable("4"), pods("a", "v1", 3)),
			want{createV2: 1, note: "paused: 3 pods above partition 0"}},
		{"ReCreate recreates even when in place is possible", cs(1, pods("a", "v1", 1)),
			want{updates: []string{"a-0"}, modes: []UpdateMode{UpdateRecreate}, createV2: 1}},
		{"InPlaceIfPossible updates in place when possible", cs(1, updateType(ip), pods("a", "v1", 1)),
			want{updates: []string{"a-0"}, modes: []UpdateMode{UpdateInPlace}}},
		{"InPlaceIfPossible recreates when in place is impossible", cs(1, updateType(ip), noInPlace, pods("a", "v1", 1)),
			want{updates: []string{"a-0"}, modes: []UpdateMode{UpdateRecreate}, createV2: 1}},
		{"InPlaceOnly refuses a change that cannot be applied in place", cs(1, updateType(only), noInPlace, pods("a", "v1", 1)),
			want{refusals: 1}},
		{"InPlaceOnly updates in place", cs(1, updateType(only), pods("a", "v1", 1)),
			want{updates: []string{"a-0"}, modes: []UpdateMode{UpdateInPlace}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(tc.snap, t0, Options{})
			w := tc.want
			if got := p.deleted(); !slices.Equal(got, w.deletes) {
				t.Errorf("deletes = %v, want %v", got, w.deletes)
			}
			if got := p.updated(); !slices.Equal(got, w.updates) {
				t.Errorf("updates = %v, want %v", got, w.updates)
			}
			if c1, c2 := p.creates("v1"), p.creates("v2"); c1 != w.createV1 || c2 != w.createV2 {
				t.Errorf("creates v1=%d v2=%d, want %d %d", c1, c2, w.createV1, w.createV2)
			}
			if len(p.Refusals) != w.refusals {
				t.Errorf("refusals = %v, want %d", p.Refusals, w.refusals)
			}
			if w.note != "" && !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, w.note) }) {
				t.Errorf("notes %q lack %q", p.Notes, w.note)
			}
			for i, m := range w.modes {
				if p.Updates[i].Mode != m {
					t.Errorf("update %d mode = %s, want %s (%s)", i, p.Updates[i].Mode, m, p.Updates[i].Reason)
				}
			}
			for i, k := range w.deleteKinds {
				if p.Deletes[i].Kind != k {
					t.Errorf("delete %d kind = %s, want %s", i, p.Deletes[i].Kind, k)
				}
			}
			if t.Failed() {
				t.Logf("plan: %+v", p)
			}
		})
	}
}

func TestComputeBounds(t *testing.T) {
	cases := []struct {
		name                 string
		replicas             int32
		part, unavail, surge string
		wantP, wantU, wantS  int
	}{
		{"percent partition rounds up", 5, "50%", "20%", "0", 3, 1, 0},
		{"percent partition below 100% leaves one pod to update", 5, "90%", "20%", "0", 4, 1, 0},
		{"100% partition updates nothing", 5, "100%", "20%", "0", 5, 1, 0},
		{"partition above replicas is clamped", 3, "7", "1", "0", 3, 1, 0},
		{"maxUnavailable rounds down when maxSurge is set", 5, "0", "30%", "1", 0, 1, 1},
		{"maxUnavailable rounds up without maxSurge", 5, "0", "30%", "0", 0, 2, 0},
		{"zero maxUnavailable and maxSurge become maxUnavailable 1", 5, "0", "0", "0", 0, 1, 0},
		{"maxSurge percent rounds up", 5, "0", "0", "10%", 0, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := cs(tc.replicas, partition(tc.part), maxUnavailable(tc.unavail), maxSurge(tc.surge))
			b := ComputeBounds(&s.Spec)
			if b.Partition != tc.wantP || b.MaxUnavailable != tc.wantU || b.MaxSurge != tc.wantS {
				t.Errorf("bounds = %+v, want partition %d maxUnavailable %d maxSurge %d", b, tc.wantP, tc.wantU, tc.wantS)
			}
		})
	}
}

func TestNextDeadlineIsWhenMinReadySecondsExpires(t *testing.T) {
	s := cs(2, pods("b", "v2", 1), pods("c", "v2", 1, func(p *PodFacts) { p.ReadySince = t0.Add(-4 * time.Second) }))
	s.Spec.MinReadySeconds = 10
	p := Compute(s, t0, Options{})
	if want := t0.Add(6 * time.Second); !p.NextDeadline.Equal(want) {
		t.Fatalf("NextDeadline = %v, want %v", p.NextDeadline, want)
	}
	if d := p.RequeueAfter(t0); d != 6*time.Second {
		t.Fatalf("RequeueAfter = %v", d)
	}
	// The pod is ready but not yet available, so with maxUnavailable 1 no available pod may go.
	s2 := cs(2, maxUnavailable("1"), pods("a", "v1", 1), pods("c", "v2", 1, func(p *PodFacts) { p.ReadySince = t0.Add(-4 * time.Second) }))
	s2.Spec.MinReadySeconds = 10
	if p := Compute(s2, t0, Options{}); len(p.Updates) != 0 {
		t.Fatalf("updated %v while a pod is within minReadySeconds", p.updated())
	}
}

func labelled(kv ...string) func(*PodFacts) {
	return func(p *PodFacts) {
		p.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

// priorityStrategy decides which pods a partial rollout updates, ahead of the default order (a
// not-ready pod would otherwise go first); scatterStrategy spreads the matching pods.
func TestPlanUpdateOrderStrategies(t *testing.T) {
	weight := func(s *Snapshot) {
		s.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{
			{Weight: 10, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"prio": "high"}}}}}
	}
	s := cs(4, weight, partition("3"), maxUnavailable("2"), pods("a", "v1", 1, notReady), pods("b", "v1", 2),
		pods("c", "v1", 1, labelled("prio", "high")))
	if got := Compute(s, t0, Options{}).updated(); !slices.Equal(got, []string{"c-0"}) {
		t.Errorf("weightPriority: updated %v, want [c-0]", got)
	}
	order := func(s *Snapshot) {
		s.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{OrderPriority: []appspub.UpdatePriorityOrderTerm{{OrderedKey: "ord"}}}
	}
	// OpenKruise v1.9.0 updates the pods without the ordered key first (c-0), then the higher value.
	s = cs(3, order, maxUnavailable("3"), pods("a", "v1", 1, labelled("ord", "1")), pods("b", "v1", 1, labelled("ord", "3")),
		pods("c", "v1", 1))
	if got := Compute(s, t0, Options{}).updated(); !slices.Equal(got, []string{"c-0", "b-0", "a-0"}) {
		t.Errorf("orderPriority: updated %v, want [c-0 b-0 a-0]", got)
	}
	scatter := func(s *Snapshot) {
		s.Spec.UpdateStrategy.ScatterStrategy = v1alpha1.UpdateScatterStrategy{{Key: "zone", Value: "a"}}
	}
	s = cs(6, scatter, maxUnavailable("100%"), pods("a", "v1", 3, labelled("zone", "a")), pods("b", "v1", 3))
	if got := Compute(s, t0, Options{}).updated(); !slices.Equal(got, []string{"a-0", "b-0", "b-1", "a-1", "b-2", "a-2"}) {
		t.Errorf("scatterStrategy: updated %v, want zone=a at the first, fourth and last place", got)
	}
	// Mid-rollout the spread is that of all pods: a-0 (zone=a) is updated, so b-0 is next, not c-0.
	s = cs(6, scatter, maxUnavailable("1"), pods("a", "v2", 1, labelled("zone", "a")), pods("b", "v1", 3),
		pods("c", "v1", 2, labelled("zone", "a")))
	if got := Compute(s, t0, Options{}).updated(); !slices.Equal(got, []string{"b-0"}) {
		t.Errorf("scatterStrategy mid-rollout: updated %v, want [b-0]", got)
	}
}

func TestComputeDoesNotModifySnapshot(t *testing.T) {
	s := cs(2, pods("a", "v1", 3, specified))
	before := slices.Clone(s.Pods)
	Compute(s, t0, Options{})
	if !reflect.DeepEqual(before, s.Pods) {
		t.Fatal("Compute modified the snapshot's pods")
	}
}

// A pod waiting out its grace period is unavailable (it holds maxUnavailable), is resumed once the
// period is over, and its end is the plan's next deadline.
func TestPlanGracePeriod(t *testing.T) {
	waitUntil := func(d time.Duration) func(*PodFacts) {
		return func(p *PodFacts) { p.InPlaceUpdating, p.GraceDue = true, t0.Add(d) }
	}
	snap := cs(4, maxUnavailable("1"), pods("a", "v2", 1, waitUntil(3*time.Second)), pods("b", "v1", 3))
	plan := Compute(snap, t0, Options{})
	if len(plan.Resumes) != 0 || len(plan.Updates) != 0 {
		t.Errorf("before the grace period ends: resumes %v, updates %v; want none (the waiting pod holds maxUnavailable 1)", plan.Resumes, plan.updated())
	}
	if !plan.NextDeadline.Equal(t0.Add(3 * time.Second)) {
		t.Errorf("next deadline %v, want the end of the grace period %v", plan.NextDeadline, t0.Add(3*time.Second))
	}
	plan = Compute(snap, t0.Add(3*time.Second), Options{})
	if !slices.Equal(plan.Resumes, []string{"a-0"}) || len(plan.Updates) != 0 {
		t.Errorf("at the end of the grace period: resumes %v, updates %v; want [a-0] and no update", plan.Resumes, plan.updated())
	}
	if plan.Empty() {
		t.Error("a plan that resumes a pod reports itself empty")
	}
}

// maxSurge with InPlaceIfPossible creates no surge pod when every old pod can be updated in place
// (OpenKruise creates surge pods and then deletes old ones: openkruise/kruise#2369); pods that must
// be recreated still get their surge.
func TestPlanSurgeOnlyForRecreatedPods(t *testing.T) {
	ip := v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
	plan := Compute(cs(5, maxSurge("3"), updateType(ip), pods("a", "v1", 5)), t0, Options{})
	if n := len(plan.Creates); n != 0 || len(plan.Deletes) != 0 {
		t.Errorf("in place possible: %d creates, deletes %v; want none", n, plan.deleted())
	}
	for _, u := range plan.Updates {
		if u.Mode != UpdateInPlace {
			t.Errorf("update %+v is not in place", u)
		}
	}
	if len(plan.Updates) == 0 {
		t.Error("nothing updated")
	}
	surge := func(p Plan) int { // pods after the plan − replicas
		n := len(p.Creates) - len(p.Deletes)
		for _, u := range p.Updates {
			if u.Mode == UpdateRecreate {
				n--
			}
		}
		return n
	}
	plan = Compute(cs(5, maxSurge("3"), updateType(ip), noInPlace, pods("a", "v1", 5)), t0, Options{})
	if n := surge(plan); n != 3 {
		t.Errorf("recreate needed: surge %d; want maxSurge 3", n)
	}
	rec := v1alpha1.RecreateCloneSetUpdateStrategyType
	plan = Compute(cs(5, maxSurge("3"), updateType(rec), pods("a", "v1", 5)), t0, Options{})
	if n := surge(plan); n != 3 {
		t.Errorf("ReCreate: surge %d; want maxSurge 3", n)
	}
}

// CloneSetPartitionRollback: a partition raised during a rollout moves the excess updated pods back
// to the current revision (in place when possible, else recreated at the current revision); without
// the gate a raised partition only stops the rollout.
func TestPlanPartitionRollback(t *testing.T) {
	ip := v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
	back := func(d inplace.Decision) func(*Snapshot) { return func(s *Snapshot) { s.Rollback = &d } }
	inPlaceBack := back(inplace.Decision{Spec: &inplace.UpdateSpec{Revision: "v1", ContainerImages: map[string]string{"app": "img:1"}}})
	s := cs(5, updateType(ip), partition("3"), maxUnavailable("2"), inPlaceBack, pods("a", "v1", 2), pods("b", "v2", 3))
	if p := Compute(s, t0, Options{}); len(p.Updates) != 0 || len(p.Creates) != 0 {
		t.Errorf("without the gate: updates %v, %d creates; want none", p.updated(), len(p.Creates))
	}
	p := Compute(s, t0, Options{PartitionRollback: true})
	if !slices.Equal(p.updated(), []string{"b-0"}) || p.Updates[0].Mode != UpdateInPlace || p.Updates[0].Spec.Revision != "v1" ||
		len(p.Creates) != 0 || len(p.Deletes) != 0 {
		t.Errorf("in place: updates %+v, %d creates, deletes %v; want b-0 back to v1 in place, nothing else", p.Updates, len(p.Creates), p.deleted())
	}
	s = cs(5, updateType(ip), partition("4"), maxUnavailable("1"), back(inplace.Decision{RecreateReasons: []string{"spec.volumes changed"}}),
		pods("a", "v1", 2), pods("b", "v2", 3))
	p = Compute(s, t0, Options{PartitionRollback: true})
	if !slices.Equal(p.updated(), []string{"b-0"}) || p.Updates[0].Mode != UpdateRecreate || p.creates("v1") != 1 || p.creates("v2") != 0 {
		t.Errorf("recreate: updates %+v, creates v1 %d v2 %d; want b-0 recreated at v1 (maxUnavailable 1)", p.Updates, p.creates("v1"), p.creates("v2"))
	}
	if !strings.Contains(p.Updates[0].Reason, "back to revision v1") {
		t.Errorf("reason %q does not say the pod goes back", p.Updates[0].Reason)
	}
}

// volumeClaimTemplates: new pods reuse the instance IDs (and PVCs) deleted pods left, or wait for
// a terminating pod to go to reuse its; with disablePVCReuse the free PVCs are released instead.
func TestPlanClaimReuse(t *testing.T) {
	free := func(ids ...string) func(*Snapshot) { return func(s *Snapshot) { s.FreeInstanceIDs = ids } }
	p := Compute(cs(3, pods("a", "v2", 1), free("x", "y")), t0, Options{})
	if len(p.Creates) != 2 || p.Creates[0].InstanceID != "x" || p.Creates[1].InstanceID != "y" || len(p.ReleaseInstanceIDs) != 0 {
		t.Errorf("creates %+v, releases %v; want instances x and y reused", p.Creates, p.ReleaseInstanceIDs)
	}
	p = Compute(cs(3, pods("a", "v2", 1), free("x"), func(s *Snapshot) { s.Spec.ScaleStrategy.DisablePVCReuse = true }), t0, Options{})
	if len(p.Creates) != 2 || p.Creates[0].InstanceID != "" || !slices.Equal(p.ReleaseInstanceIDs, []string{"x"}) {
		t.Errorf("disablePVCReuse: creates %+v, releases %v; want fresh instances and x released", p.Creates, p.ReleaseInstanceIDs)
	}
	p = Compute(cs(3, pods("a", "v2", 1), pods("t", "v2", 1, terminating), free("x"),
		func(s *Snapshot) { s.TerminatingInstanceIDs = []string{"t"} }), t0, Options{})
	if len(p.Creates) != 1 || p.Creates[0].InstanceID != "x" || !strings.Contains(strings.Join(p.Notes, "\n"), "wait for terminating pods [t]") {
		t.Errorf("creates %+v, notes %v; want x reused and one creation waiting for t", p.Creates, p.Notes)
	}
}

// PreparingUpdateAsUpdate (OpenKruise's gate): scaling counts a pod held in PreparingUpdate as
// updated, so a new pod keeps the partition at the current revision.
func TestPlanPreparingUpdateAsUpdate(t *testing.T) {
	ip := v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
	held := hooks(appspub.Lifecycle{InPlaceUpdate: &appspub.LifecycleHook{LabelsHandler: map[string]string{"hold": "true"}}})
	s := cs(5, updateType(ip), partition("3"), held, pods("a", "v1", 2), pods("p", "v1", 1, state(appspub.LifecycleStatePreparingUpdate), updateHeld),
		pods("b", "v2", 1))
	if p := Compute(s, t0, Options{}); p.creates("v2") != 1 || p.creates("v1") != 0 {
		t.Errorf("without the gate: creates v1 %d v2 %d; want the new pod at v2 (3 old pods keep partition 3)", p.creates("v1"), p.creates("v2"))
	}
	if p := Compute(s, t0, Options{PreparingUpdateAsUpdate: true}); p.creates("v1") != 1 || p.creates("v2") != 0 {
		t.Errorf("with the gate: creates v1 %d v2 %d; want the new pod at v1 (the held pod counts as updated)", p.creates("v1"), p.creates("v2"))
	}
}

// A rollout wider than podcontrol.MaxUpdatesPerReconcile updates that many pods, first in the
// update order, and asks to run again at once for the rest; the rest are planned from the next
// snapshot, where the first are unavailable.
func TestPlanUpdatesAtMostMaxPerReconcile(t *testing.T) {
	n := podcontrol.MaxUpdatesPerReconcile + 100
	inPlace := updateType(v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	s := cs(int32(n), inPlace, maxUnavailable("100%"), pods("a", "v1", n))
	p := Compute(s, t0, Options{})
	if len(p.Updates) != podcontrol.MaxUpdatesPerReconcile {
		t.Fatalf("%d updates, want %d", len(p.Updates), podcontrol.MaxUpdatesPerReconcile)
	}
	if d := p.RequeueAfter(t0); d <= 0 || d > time.Millisecond {
		t.Fatalf("RequeueAfter = %v, want at once", d)
	}
	if len(p.Creates)+len(p.Deletes) != 0 {
		t.Fatalf("creates %d, deletes %d with the rest of the updates held back", len(p.Creates), len(p.Deletes))
	}
	planned := map[string]bool{}
	for _, u := range p.Updates {
		planned[u.Pod] = true
	}
	for i := range s.Pods {
		if planned[s.Pods[i].Name] {
			s.Pods[i].Revision, s.Pods[i].Ready, s.Pods[i].ReadySince = "v2", false, time.Time{}
		}
	}
	next := Compute(s, t0, Options{})
	if len(next.Updates) != 100 || !next.NextDeadline.IsZero() {
		t.Fatalf("next reconcile: %d updates, deadline %v; want the 100 left and no requeue", len(next.Updates), next.NextDeadline)
	}
	for _, u := range next.Updates {
		if planned[u.Pod] {
			t.Fatalf("pod %s updated twice", u.Pod)
		}
	}
	// Below the bound nothing changes: every pod of the budget in one plan.
	if p := Compute(cs(100, inPlace, maxUnavailable("100%"), pods("a", "v1", 100)), t0, Options{}); len(p.Updates) != 100 || !p.NextDeadline.IsZero() {
		t.Fatalf("100 pods: %d updates, deadline %v", len(p.Updates), p.NextDeadline)
	}
}

// A scale-up that scaleStrategy.maxUnavailable holds back says how many creations it allows (the
// ScaleUpLimited event, as OpenKruise's); one it does not hold back says nothing.
func TestScaleUpLimit(t *testing.T) {
	limited := cs(6, func(s *Snapshot) { s.Spec.ScaleStrategy.MaxUnavailable = ios("2") }, pods("b", "v2", 1), pods("c", "v2", 1, notReady))
	if p := Compute(limited, t0, Options{}); p.ScaleUpLimit == nil || *p.ScaleUpLimit != 1 {
		t.Errorf("limit %v, want 1 creation allowed", p.ScaleUpLimit)
	}
	free := cs(6, func(s *Snapshot) { s.Spec.ScaleStrategy.MaxUnavailable = ios("10") }, pods("b", "v2", 2))
	if p := Compute(free, t0, Options{}); p.ScaleUpLimit != nil {
		t.Errorf("limit %v for a scale-up within scaleStrategy.maxUnavailable, want none", *p.ScaleUpLimit)
	}
}
