package uniteddeployment

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/subset"
)

func n(v int) *intstr.IntOrString      { x := intstr.FromInt32(int32(v)); return &x }
func pct(v string) *intstr.IntOrString { x := intstr.FromString(v); return &x }

func sub(name string, replicas, minR, maxR *intstr.IntOrString) appsv1alpha1.UnitedDeploymentSubset {
	return appsv1alpha1.UnitedDeploymentSubset{Name: name, Replicas: replicas, MinReplicas: minR, MaxReplicas: maxR}
}

type allocCase struct {
	name     string
	replicas *int32
	subsets  []appsv1alpha1.UnitedDeploymentSubset
	strategy appsv1alpha1.UnitedDeploymentScheduleStrategy
	current  map[string]SubsetState
	want     map[string]int32
	wantErr  string
}

func runAllocCases(t *testing.T, cases []allocCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := &appsv1alpha1.UnitedDeploymentSpec{Replicas: tc.replicas}
			spec.Topology.Subsets = tc.subsets
			spec.Topology.ScheduleStrategy = tc.strategy
			before := spec.DeepCopy()
			got, err := Allocate(spec, tc.current)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q (got %v)", err, tc.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(tc.want, got) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if len(got) != len(tc.subsets) {
				t.Errorf("%d entries for %d subsets", len(got), len(tc.subsets))
			}
			if !equality.Semantic.DeepEqual(before, spec) {
				t.Error("spec modified")
			}
		})
	}
}

// Fixed allocation. OpenKruise fills subsets with a `replicas` value first, rejects impossible
// sums, and splits the rest evenly; its remainder goes to the subsets that already hold the most
// replicas (ties broken by the greater name), which keeps pods where they are.
func TestAllocateFixed(t *testing.T) {
	runAllocCases(t, []allocCase{{
		name:     "takeover fixture: 4 replicas, zone-a fixed at 1",
		replicas: ptr.To[int32](4),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("zone-a", n(1), nil, nil), sub("zone-b", nil, nil, nil)},
		want:     map[string]int32{"zone-a": 1, "zone-b": 3},
	}, {
		name:     "even split, remainder to the greatest name when nothing runs yet",
		replicas: ptr.To[int32](10),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, nil, nil), sub("b", nil, nil, nil), sub("c", nil, nil, nil)},
		want:     map[string]int32{"a": 3, "b": 3, "c": 4},
	}, {
		name:     "remainder to the subsets holding most replicas",
		replicas: ptr.To[int32](11),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, nil, nil), sub("b", nil, nil, nil), sub("c", nil, nil, nil)},
		current:  map[string]SubsetState{"a": {Replicas: 5}, "b": {Replicas: 1}, "c": {Replicas: 0}},
		want:     map[string]int32{"a": 4, "b": 4, "c": 3},
	}, {
		name:     "percentages round half up; rest to the unfixed",
		replicas: ptr.To[int32](10),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", pct("25%"), nil, nil), sub("b", pct("33%"), nil, nil), sub("c", nil, nil, nil)},
		want:     map[string]int32{"a": 3, "b": 3, "c": 4},
	}, {
		name:     "fixed zero",
		replicas: ptr.To[int32](2),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", n(0), nil, nil), sub("b", nil, nil, nil)},
		want:     map[string]int32{"a": 0, "b": 2},
	}, {
		name:     "unparsable value counts as unset",
		replicas: ptr.To[int32](5),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", pct("half"), nil, nil), sub("b", n(2), nil, nil)},
		want:     map[string]int32{"a": 3, "b": 2},
	}, {
		name:     "fixed values above spec.replicas",
		replicas: ptr.To[int32](10),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", n(6), nil, nil), sub("b", n(5), nil, nil), sub("c", nil, nil, nil)},
		wantErr:  "specified subsets' replica (11) is greater than UnitedDeployment replica (10)",
	}, {
		name:     "all fixed, below spec.replicas",
		replicas: ptr.To[int32](10),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", n(3), nil, nil), sub("b", pct("30%"), nil, nil)},
		wantErr:  "specified subsets' replica (6) is less than UnitedDeployment replica (10)",
	}, {
		name:    "spec.replicas unset, all fixed: taken as is",
		subsets: []appsv1alpha1.UnitedDeploymentSubset{sub("a", n(2), nil, nil), sub("b", n(3), nil, nil)},
		want:    map[string]int32{"a": 2, "b": 3},
	}, {
		name:    "spec.replicas unset, one unfixed",
		subsets: []appsv1alpha1.UnitedDeploymentSubset{sub("a", n(2), nil, nil), sub("b", nil, nil, nil)},
		wantErr: "all subsets must be specified",
	}, {
		name:    "spec.replicas unset: a percentage cannot resolve",
		subsets: []appsv1alpha1.UnitedDeploymentSubset{sub("a", n(2), nil, nil), sub("b", pct("50%"), nil, nil)},
		wantErr: "all subsets must be specified",
	}})
}

// Elastic allocation: minimums in subset order, then maximums in subset order (OpenKruise's own
// example: 5 replicas, a{min 2, max 4}, b{min 2} gives a 3, b 2).
func TestAllocateElastic(t *testing.T) {
	runAllocCases(t, []allocCase{{
		name:     "OpenKruise's documented example",
		replicas: ptr.To[int32](5),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, n(2), n(4)), sub("b", nil, n(2), nil)},
		want:     map[string]int32{"a": 3, "b": 2},
	}, {
		name:     "minimums above spec.replicas: earlier subsets first",
		replicas: ptr.To[int32](3),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, n(2), nil), sub("b", nil, n(2), nil)},
		want:     map[string]int32{"a": 2, "b": 1},
	}, {
		name:     "percentage maximum; last subset unbounded takes the rest",
		replicas: ptr.To[int32](10),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, nil, pct("30%")), sub("b", nil, nil, nil)},
		want:     map[string]int32{"a": 3, "b": 7},
	}, {
		name:     "all bounded below spec.replicas: the excess is not placed",
		replicas: ptr.To[int32](10),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, nil, n(2)), sub("b", nil, nil, n(3))},
		want:     map[string]int32{"a": 2, "b": 3},
	}, {
		name:     "bounds win over replicas",
		replicas: ptr.To[int32](4),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", n(1), nil, n(3)), sub("b", nil, nil, nil)},
		want:     map[string]int32{"a": 3, "b": 1},
	}, {
		name:     "minReplicas above maxReplicas",
		replicas: ptr.To[int32](4),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, nil, nil), sub("b", nil, n(3), n(2))},
		wantErr:  "subset[1].maxReplicas(2) must be more than or equal to minReplicas(3)",
	}, {
		name:    "spec.replicas unset counts as 0",
		subsets: []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, n(1), nil)},
		want:    map[string]int32{"a": 0},
	}})
}

var adaptive = appsv1alpha1.UnitedDeploymentScheduleStrategy{Type: appsv1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType}

// Adaptive allocation: an unschedulable subset keeps no more than its ready pods, a schedulable one
// never gives up ready pods, so stuck replicas flow to later subsets and come back only as new
// pods are needed.
func TestAllocateAdaptive(t *testing.T) {
	three := []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, nil, nil), sub("b", nil, nil, nil), sub("c", nil, nil, nil)}
	runAllocCases(t, []allocCase{{
		name:     "all schedulable: everything to the first subset",
		replicas: ptr.To[int32](5),
		subsets:  three,
		strategy: adaptive,
		want:     map[string]int32{"a": 5, "b": 0, "c": 0},
	}, {
		name:     "unschedulable first subset keeps its ready pods; the rest moves on",
		replicas: ptr.To[int32](5),
		subsets:  three,
		strategy: adaptive,
		current:  map[string]SubsetState{"a": {Replicas: 5, ReadyReplicas: 2, Unschedulable: true}},
		want:     map[string]int32{"a": 2, "b": 3, "c": 0},
	}, {
		name:     "two unschedulable subsets",
		replicas: ptr.To[int32](5),
		subsets:  three,
		strategy: adaptive,
		current: map[string]SubsetState{
			"a": {Replicas: 2, ReadyReplicas: 2, Unschedulable: true},
			"b": {Replicas: 3, ReadyReplicas: 1, Unschedulable: true},
		},
		want: map[string]int32{"a": 2, "b": 1, "c": 2},
	}, {
		name:     "recovered subset does not take ready pods back",
		replicas: ptr.To[int32](6),
		subsets:  three,
		strategy: adaptive,
		current: map[string]SubsetState{
			"a": {Replicas: 2, ReadyReplicas: 2},
			"b": {Replicas: 3, ReadyReplicas: 3},
		},
		want: map[string]int32{"a": 3, "b": 3, "c": 0},
	}, {
		name:     "ready pods protected only up to maxReplicas",
		replicas: ptr.To[int32](4),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, nil, nil), sub("b", nil, nil, n(2))},
		strategy: adaptive,
		current:  map[string]SubsetState{"b": {Replicas: 3, ReadyReplicas: 3}},
		want:     map[string]int32{"a": 2, "b": 2},
	}, {
		name:     "unschedulable subset keeps at least its minimum",
		replicas: ptr.To[int32](5),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, n(3), nil), sub("b", nil, nil, nil)},
		strategy: adaptive,
		current:  map[string]SubsetState{"a": {Replicas: 5, ReadyReplicas: 1, Unschedulable: true}},
		want:     map[string]int32{"a": 3, "b": 2},
	}})
}

var reserving = appsv1alpha1.UnitedDeploymentScheduleStrategy{
	Type:     appsv1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType,
	Adaptive: &appsv1alpha1.UnitedDeploymentAdaptiveStrategy{ReserveUnschedulablePods: true},
}

// Adaptive with reserveUnschedulablePods: reserved pods stay in their subset and are not counted,
// so temporary replicas of the same number are placed in later subsets; when the reserved pods
// start, the temporary ones are no longer needed.
func TestAllocateReserving(t *testing.T) {
	two := []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, nil, nil), sub("b", nil, nil, nil)}
	runAllocCases(t, []allocCase{{
		name:     "all schedulable: like the elastic allocator",
		replicas: ptr.To[int32](5),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, nil, n(2)), sub("b", nil, nil, nil)},
		strategy: reserving,
		want:     map[string]int32{"a": 2, "b": 3},
	}, {
		name:     "reserved pods stay; as many temporary pods in the next subset",
		replicas: ptr.To[int32](3),
		subsets:  two,
		strategy: reserving,
		current:  map[string]SubsetState{"a": {Replicas: 3, ReservedPods: 2, Unschedulable: true, Marked: true}},
		want:     map[string]int32{"a": 3, "b": 2},
	}, {
		name:     "no pod of the subset runs: all replicas temporary elsewhere",
		replicas: ptr.To[int32](3),
		subsets:  two,
		strategy: reserving,
		current:  map[string]SubsetState{"a": {Replicas: 3, ReservedPods: 3, Unschedulable: true, Marked: true}},
		want:     map[string]int32{"a": 3, "b": 3},
	}, {
		name:     "reserved pods started: temporary pods go away",
		replicas: ptr.To[int32](3),
		subsets:  two,
		strategy: reserving,
		current:  map[string]SubsetState{"a": {Replicas: 3, Marked: true}, "b": {Replicas: 2}},
		want:     map[string]int32{"a": 3, "b": 0},
	}, {
		name:     "just-recovered subset scaled up: the new pods count as reserved until they run",
		replicas: ptr.To[int32](5),
		subsets:  two,
		strategy: reserving,
		current:  map[string]SubsetState{"a": {Replicas: 3, Marked: true}},
		want:     map[string]int32{"a": 5, "b": 2},
	}, {
		name:     "minimums first, then the unschedulable subset up to its current replicas",
		replicas: ptr.To[int32](4),
		subsets:  []appsv1alpha1.UnitedDeploymentSubset{sub("a", nil, n(1), nil), sub("b", nil, n(1), nil), sub("c", nil, nil, nil)},
		strategy: reserving,
		current:  map[string]SubsetState{"a": {Replicas: 2, ReservedPods: 1, Unschedulable: true, Marked: true}},
		want:     map[string]int32{"a": 2, "b": 3, "c": 0},
	}})
}

func TestParseSubsetReplicas(t *testing.T) {
	for _, tc := range []struct {
		total   int32
		v       intstr.IntOrString
		want    int32
		wantErr bool
	}{
		{10, intstr.FromInt32(3), 3, false},
		{-1, intstr.FromInt32(3), 3, false},
		{10, intstr.FromInt32(-1), 0, true},
		{10, intstr.FromString("15%"), 2, false}, // 1.5 rounds up
		{10, intstr.FromString("14%"), 1, false},
		{3, intstr.FromString("50%"), 2, false},
		{10, intstr.FromString("100%"), 10, false},
		{10, intstr.FromString("101%"), 0, true},
		{10, intstr.FromString("5"), 0, true},
		{-1, intstr.FromString("5%"), 0, true},
	} {
		got, err := subset.ParseReplicas(tc.total, tc.v)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("subset.ParseReplicas(%d, %s) = %d, %v; want %d, err %v", tc.total, tc.v.String(), got, err, tc.want, tc.wantErr)
		}
	}
}
