package cloneset

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// one adds a single ready, running pod of revision v1 named name on its own node (see pods).
func one(name string, mut ...func(*PodFacts)) func(*Snapshot) {
	return func(s *Snapshot) {
		pods(name, "v1", 1, append([]func(*PodFacts){func(p *PodFacts) { p.Name, p.NodeName = name, "node-"+name }}, mut...)...)(s)
	}
}

func phase(ph corev1.PodPhase) func(*PodFacts) { return func(p *PodFacts) { p.Phase = ph } }
func readyAgo(d time.Duration) func(*PodFacts) {
	return func(p *PodFacts) { p.ReadySince = t0.Add(-d) }
}
func restarts(regular, sidecar int32) func(*PodFacts) {
	return func(p *PodFacts) { p.MaxRestarts, p.SidecarRestarts = regular, sidecar }
}
func inState(s appspub.LifecycleStateType) func(*PodFacts) {
	return func(p *PodFacts) { p.Lifecycle = s }
}
func atRevision(r string) func(*PodFacts) { return func(p *PodFacts) { p.Revision = r } }
func label(k, v string) func(*PodFacts) {
	return func(p *PodFacts) { p.Labels = map[string]string{k: v} }
}

func order(ps []*PodFacts) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return strings.Join(out, " ")
}

// TestUpdateOrder checks sortForUpdate against OpenKruise v1.9.0's SortUpdateIndexes
// (pkg/controller/cloneset/sync/cloneset_update.go): Kubernetes' ActivePods order (k8s.io/kubernetes
// v1.32 pkg/controller), then priorityStrategy, then scatterStrategy, then PreparingUpdate first.
func TestUpdateOrder(t *testing.T) {
	weight := func(k, v string) func(*Snapshot) {
		return func(s *Snapshot) {
			s.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{
				{Weight: 10, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{k: v}}}}}
		}
	}
	scatter := func(s *Snapshot) {
		s.Spec.UpdateStrategy.ScatterStrategy = v1alpha1.UpdateScatterStrategy{{Key: "zone", Value: "a"}}
	}
	for _, tc := range []struct {
		rule string
		snap []func(*Snapshot)
		want string
	}{
		{"ActivePods 1: unscheduled before scheduled",
			[]func(*Snapshot){one("a"), one("b", unscheduled, phase(corev1.PodRunning))}, "b a"},
		{"ActivePods 2: Pending < Unknown < Running; no phase ranks as Pending",
			[]func(*Snapshot){one("a"), one("b", phase(corev1.PodUnknown)), one("c", phase(corev1.PodPending)), one("d", phase(""))},
			"c d b a"},
		{"ActivePods 3: not ready before ready",
			[]func(*Snapshot){one("a"), one("b", notReady)}, "b a"},
		{"ActivePods 4: both ready, ready for a shorter time first, an unknown ready time first",
			[]func(*Snapshot){one("a", readyAgo(time.Hour)), one("b", readyAgo(time.Minute)), one("c", func(p *PodFacts) { p.ReadySince = time.Time{} })},
			"c b a"},
		{"ActivePods 5: the highest container restart count first (not the sum), then sidecar restarts",
			[]func(*Snapshot){one("a", restarts(2, 0), func(p *PodFacts) { p.RestartCount = 4 }), one("b", restarts(3, 0)),
				one("c", restarts(2, 1))}, "b c a"},
		{"ActivePods 6: newer first, an unknown creation time first",
			[]func(*Snapshot){one("a", created(-3*time.Hour)), one("b", created(-time.Hour)), one("c", func(p *PodFacts) { p.CreationTime = time.Time{} })},
			"c b a"},
		{"ties of every OpenKruise rule: by name (OpenKruise's sort leaves them open)",
			[]func(*Snapshot){one("b"), one("c"), one("a")}, "a b c"},
		{"priorityStrategy comes after the ActivePods order and overrides it",
			[]func(*Snapshot){weight("prio", "high"), one("a", notReady), one("b", label("prio", "high"))}, "b a"},
		{"priorityStrategy ties keep the ActivePods order (stable sort, openkruise/kruise#2106)",
			[]func(*Snapshot){weight("never", "1"), one("a"), one("b", notReady)}, "b a"},
		{"orderPriority: pods without the ordered key first",
			[]func(*Snapshot){func(s *Snapshot) {
				s.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{OrderPriority: []appspub.UpdatePriorityOrderTerm{{OrderedKey: "ord"}}}
			}, one("a", label("ord", "9")), one("b")}, "b a"},
		{"scatterStrategy spreads the matching pods with the density of all the alive pods (updated ones too)",
			[]func(*Snapshot){scatter, one("a"), one("b"), one("c"), one("x", label("zone", "a")), one("y", label("zone", "a")),
				one("u", label("zone", "a"), atRevision("v2"))}, "a x b c y"},
		{"PreparingUpdate pods first, over priorityStrategy",
			[]func(*Snapshot){weight("prio", "high"), one("a", label("prio", "high")), one("b", inState(appspub.LifecycleStatePreparingUpdate))},
			"b a"},
	} {
		s := cs(int32(len(tc.snap)), tc.snap...)
		pl := newPlanner(s, t0, Options{})
		var cand []*PodFacts
		for _, p := range pl.alive() {
			if pl.isOld(p) {
				cand = append(cand, p)
			}
		}
		pl.sortForUpdate(cand)
		if got := order(cand); got != tc.want {
			t.Errorf("%s: order %q, want %q", tc.rule, got, tc.want)
		}
	}
}

// TestDeletionOrder checks sortForDeletion against OpenKruise v1.9.0's choosePodsToDelete
// (pkg/controller/cloneset/sync/cloneset_scale.go) and its ActivePodsWithRanks with the same-node
// ranker (pkg/controller/cloneset/utils/pod_sorter.go).
func TestDeletionOrder(t *testing.T) {
	minReady := func(s *Snapshot) { s.Spec.MinReadySeconds = 600 }
	for _, tc := range []struct {
		rule string
		snap []func(*Snapshot)
		want string
	}{
		{"pods in PreparingDelete first: OpenKruise deletes them before choosing",
			[]func(*Snapshot){one("a", notReady), one("b", inState(appspub.LifecycleStatePreparingDelete))}, "b a"},
		{"old-revision pods before updated ones: OpenKruise removes the old pods first",
			[]func(*Snapshot){one("a", atRevision("v2"), notReady), one("b")}, "b a"},
		{"1: unscheduled before scheduled",
			[]func(*Snapshot){one("a"), one("b", unscheduled, phase(corev1.PodRunning))}, "b a"},
		{"2: Pending < Unknown < Running; no phase ranks as Pending",
			[]func(*Snapshot){one("a"), one("b", phase(corev1.PodUnknown)), one("c", phase(""))}, "c b a"},
		{"3: not available (within minReadySeconds) before available, ahead of the deletion cost",
			[]func(*Snapshot){minReady, one("a", cost(5), readyAgo(time.Minute)), one("b", cost(0))}, "a b"},
		{"3: not ready before ready",
			[]func(*Snapshot){one("a"), one("b", notReady, cost(100))}, "b a"},
		{"4: lower pod-deletion-cost first, ahead of the spread",
			[]func(*Snapshot){one("a", onNode("n1")), one("b", onNode("n1")), one("c", cost(-1))}, "c a b"},
		{"5: higher same-node rank first: k pods on a node rank k-1 ... 0, in deletion order",
			[]func(*Snapshot){one("a", onNode("n1")), one("b", onNode("n1")), one("c", onNode("n1")), one("d", onNode("n2")),
				one("e", onNode("n2")), one("f")}, "a b d c e f"},
		{"5: ranks count the pods of the same revision group only",
			[]func(*Snapshot){one("a", onNode("n2")), one("b", onNode("n1")), one("c", onNode("n1")), one("x", onNode("n2"), atRevision("v2")),
				one("y", onNode("n2"), atRevision("v2"))}, "b a c x y"},
		{"5: ranks leave out specified pods (OpenKruise deletes them before it chooses)",
			[]func(*Snapshot){one("b", onNode("n1")), one("z", onNode("n1"), specified), one("a", onNode("n2"))}, "a b z"},
		{"6: both ready, ready for a shorter time first",
			[]func(*Snapshot){one("a", readyAgo(time.Hour)), one("b", readyAgo(time.Minute))}, "b a"},
		{"7: the highest regular container restart count first; sidecar restarts do not count",
			[]func(*Snapshot){one("a", restarts(1, 5)), one("b", restarts(2, 0))}, "b a"},
		{"8: newer first",
			[]func(*Snapshot){one("a", created(-3*time.Hour)), one("b", created(-time.Hour))}, "b a"},
		{"ties of every OpenKruise rule: by name (OpenKruise's sort leaves them open)",
			[]func(*Snapshot){one("b"), one("c"), one("a")}, "a b c"},
	} {
		s := cs(int32(len(tc.snap)), tc.snap...)
		s.UpdateRevision = "v2"
		pl := newPlanner(s, t0, Options{})
		alive := pl.alive()
		pl.sortForDeletion(alive)
		if got := order(alive); got != tc.want {
			t.Errorf("%s: order %q, want %q", tc.rule, got, tc.want)
		}
	}
}

// The scale-in plan follows OpenKruise's same-node ranks, not the number of pods per node: with
// c, d, e on n2 (ranks 2, 1, 0) and a, b on n1 (ranks 1, 0), scaling 5 pods to 3 deletes c and
// then a, which spreads the remaining pods 1 + 2.
func TestScaleInFollowsSpreadRanks(t *testing.T) {
	s := cs(3, one("a", onNode("n1")), one("b", onNode("n1")), one("c", onNode("n2")), one("d", onNode("n2")), one("e", onNode("n2")),
		revisionsAll("v2"))
	if got := Compute(s, t0, Options{}).deleted(); !slices.Equal(got, []string{"c", "a"}) {
		t.Errorf("deleted %v, want [c a]", got)
	}
}

func revisionsAll(r string) func(*Snapshot) {
	return func(s *Snapshot) {
		s.CurrentRevision, s.UpdateRevision = r, r
		for i := range s.Pods {
			s.Pods[i].Revision = r
		}
	}
}

// The controller.kubernetes.io/pod-deletion-cost value, parsed as Kubernetes and OpenKruise v1.9.0
// do (getDeletionCostFromPodAnnotations): a base-10 int32 without a plus sign or leading zeros,
// else 0.
func TestDeletionCost(t *testing.T) {
	for in, want := range map[string]int32{"": 0, "5": 5, "-3": -3, "0": 0, "+2": 0, "007": 0, "abc": 0, " 5": 0, "1.5": 0,
		"-": 0, "-0": 0, "2147483647": math.MaxInt32, "2147483648": 0, "-2147483648": math.MinInt32, "-2147483649": 0} {
		if got := deletionCost(in); got != want {
			t.Errorf("deletionCost(%q) = %d, want %d", in, got, want)
		}
	}
}
