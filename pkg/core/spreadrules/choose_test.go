package spreadrules

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func num(v int) *intstr.IntOrString { x := intstr.FromInt32(int32(v)); return &x }

func pct(s string) *intstr.IntOrString { x := intstr.FromString(s); return &x }

// slot is a limited subset with the given missingReplicas.
func slot(name string, missing int32, recorded ...string) Slot {
	return Slot{Name: name, MaxReplicas: num(10), MissingReplicas: missing, Recorded: sets.New(recorded...)}
}

func unlimited(name string) Slot {
	return Slot{Name: name, MissingReplicas: Unlimited, Recorded: sets.New[string]()}
}

func unschedulable(s Slot) Slot { s.Unschedulable = true; return s }

func TestMaxReplicas(t *testing.T) {
	for _, tc := range []struct {
		name     string
		limit    *intstr.IntOrString
		replicas int32
		want     int32
		err      bool
	}{
		{"nil is unlimited", nil, 10, Unlimited, false},
		{"integer as is, whatever the replicas", num(3), 100, 3, false},
		// OpenKruise scales percentages with roundUp=true.
		{"percent rounded up", pct("30%"), 5, 2, false},
		{"percent exact", pct("50%"), 10, 5, false},
		{"percent of zero replicas", pct("50%"), 0, 0, false},
		{"string without percent is malformed", pct("5"), 10, 0, true},
		{"negative is rejected", num(-1), 10, 0, true},
	} {
		got, err := MaxReplicas(tc.limit, tc.replicas)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: got %d, %v; want %d, error %v", tc.name, got, err, tc.want, tc.err)
		}
	}
}

func TestInitialStatuses(t *testing.T) {
	// The webhook starts a revision it has no status for at each subset's full quota (-1 when
	// unlimited); a malformed value is not an error there and counts 0.
	got := InitialStatuses([]appsv1alpha1.WorkloadSpreadSubset{
		{Name: "a", MaxReplicas: num(2)}, {Name: "b", MaxReplicas: pct("25%")}, {Name: "c", MaxReplicas: pct("x")}, {Name: "d"},
	}, 10)
	want := []appsv1alpha1.WorkloadSpreadSubsetStatus{
		{Name: "a", MissingReplicas: 2}, {Name: "b", MissingReplicas: 3}, {Name: "c", MissingReplicas: 0}, {Name: "d", MissingReplicas: -1},
	}
	if !equality.Semantic.DeepEqual(want, got) {
		t.Errorf("(-want +got):\n%s", diff.Diff(want, got))
	}
}

func TestChoose(t *testing.T) {
	adaptive := appsv1alpha1.WorkloadSpreadAdaptiveScheduleStrategy
	fixed := appsv1alpha1.WorkloadSpreadFixedScheduleStrategy
	for _, tc := range []struct {
		name   string
		slots  []Slot
		pod    Creation
		want   string
		change *Change
	}{{
		// A single subset without maxReplicas takes every pod and the status is never written.
		name:  "single unlimited subset short-cut, even when marked",
		slots: []Slot{unschedulable(unlimited("a"))},
		pod:   Creation{Name: "p", Strategy: adaptive},
		want:  "a",
	}, {
		name:   "first subset with room wins and records the pod",
		slots:  []Slot{slot("a", 2), slot("b", 5)},
		pod:    Creation{Name: "p"},
		want:   "a",
		change: &Change{Subset: "a", Key: "p", Creating: true, MissingReplicas: 1},
	}, {
		name:   "a full subset is passed over",
		slots:  []Slot{slot("a", 0), slot("b", 1)},
		pod:    Creation{Name: "p"},
		want:   "b",
		change: &Change{Subset: "b", Key: "p", Creating: true, MissingReplicas: 0},
	}, {
		// missingReplicas -1 means no limit: chosen, but nothing recorded.
		name:  "unlimited later subset takes the overflow without bookkeeping",
		slots: []Slot{slot("a", 0), unlimited("b")},
		pod:   Creation{Name: "p"},
		want:  "b",
	}, {
		name:   "Adaptive skips an unschedulable subset",
		slots:  []Slot{unschedulable(slot("a", 3)), slot("b", 3)},
		pod:    Creation{Name: "p", Strategy: adaptive},
		want:   "b",
		change: &Change{Subset: "b", Key: "p", Creating: true, MissingReplicas: 2},
	}, {
		name:   "Fixed ignores the mark",
		slots:  []Slot{unschedulable(slot("a", 3)), slot("b", 3)},
		pod:    Creation{Name: "p", Strategy: fixed},
		want:   "a",
		change: &Change{Subset: "a", Key: "p", Creating: true, MissingReplicas: 2},
	}, {
		// Webhook retries (or a re-admission) must not count a pod twice.
		name:  "pod already in creating or deleting pods keeps its subset",
		slots: []Slot{slot("a", 3), slot("b", 3, "p")},
		pod:   Creation{Name: "p"},
		want:  "b",
	}, {
		// Deployments' pods have only generateName at admission: the webhook records a UUID.
		name:   "pod without a name is recorded under its generated ID",
		slots:  []Slot{slot("a", 1)},
		pod:    Creation{GeneratedID: "uid-1"},
		want:   "a",
		change: &Change{Subset: "a", Key: "uid-1", Creating: true, MissingReplicas: 0},
	}, {
		name:  "every subset full: no subset",
		slots: []Slot{slot("a", 0), slot("b", 0)},
		pod:   Creation{Name: "p"},
	}, {
		name:  "full or unschedulable: no subset",
		slots: []Slot{slot("a", 0), unschedulable(unlimited("b"))},
		pod:   Creation{Name: "p", Strategy: adaptive},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := Choose(tc.slots, tc.pod)
			if d.Subset != tc.want || !equality.Semantic.DeepEqual(tc.change, d.Change) {
				t.Errorf("got %q %+v (%s); want %q %+v", d.Subset, d.Change, d.Reason, tc.want, tc.change)
			}
			if d.Reason == "" {
				t.Error("no reason given")
			}
		})
	}
}

func TestRelease(t *testing.T) {
	for _, tc := range []struct {
		name   string
		slots  []Slot
		subset string
		want   string
		change *Change
	}{
		{"deleting frees a replica", []Slot{slot("a", 0), slot("b", 2)}, "b", "b",
			&Change{Subset: "b", Key: "p", MissingReplicas: 3}},
		{"a subset missing its whole quota frees no more", []Slot{slot("a", 10)}, "a", "a",
			&Change{Subset: "a", Key: "p", MissingReplicas: 10}},
		{"unlimited subset: nothing recorded", []Slot{unlimited("a")}, "a", "a", nil},
		{"already recorded: nothing", []Slot{slot("a", 0, "p")}, "a", "", nil},
		{"subset gone from status: nothing", []Slot{slot("a", 0)}, "z", "", nil},
	} {
		d := Release(tc.slots, "p", tc.subset)
		if d.Subset != tc.want || !equality.Semantic.DeepEqual(tc.change, d.Change) {
			t.Errorf("%s: got %q %+v (%s); want %q %+v", tc.name, d.Subset, d.Change, d.Reason, tc.want, tc.change)
		}
	}
}

func TestSlotsFromAndApply(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	old := metav1.NewTime(now.Add(-time.Second))
	spec := []appsv1alpha1.WorkloadSpreadSubset{{Name: "a", MaxReplicas: num(2)}, {Name: "b"}}
	statuses := []appsv1alpha1.WorkloadSpreadSubsetStatus{
		{Name: "a", MissingReplicas: 1, CreatingPods: map[string]metav1.Time{"c1": old}, DeletingPods: map[string]metav1.Time{"d1": old},
			Conditions: []appsv1alpha1.WorkloadSpreadSubsetCondition{{Type: appsv1alpha1.WorkloadSpreadSubsetSchedulable, Status: corev1.ConditionFalse}}},
		{Name: "b", MissingReplicas: -1},
	}
	slots := SlotsFrom(spec, statuses)
	if !slots[0].Unschedulable || slots[1].Unschedulable || !slots[0].Recorded.Equal(sets.New("c1", "d1")) ||
		slots[1].MaxReplicas != nil || slots[0].MaxReplicas.IntValue() != 2 {
		t.Fatalf("slots: %+v", slots)
	}
	before := statuses[0].DeepCopy()
	got := Change{Subset: "a", Key: "p", Creating: true, MissingReplicas: 0}.Apply(statuses, now)
	if got[0].MissingReplicas != 0 || !got[0].CreatingPods["p"].Time.Equal(now) || len(got[0].CreatingPods) != 2 {
		t.Errorf("applied: %+v", got[0])
	}
	got = Change{Subset: "b", Key: "q", MissingReplicas: 5}.Apply(statuses, now)
	if got[1].MissingReplicas != 5 || !got[1].DeletingPods["q"].Time.Equal(now) {
		t.Errorf("applied: %+v", got[1])
	}
	if !equality.Semantic.DeepEqual(before, &statuses[0]) {
		t.Errorf("input modified:\n%s", diff.Diff(before, &statuses[0]))
	}
}

func TestChooseByOrdinal(t *testing.T) {
	// OpenKruise's StatefulSet example: a (max 5), b (max 5), c (unlimited) take ordinals [0,5),
	// [5,10) and [10,∞). Unschedulable subsets are left out of the thresholds.
	slots := []Slot{{Name: "a", MaxReplicas: num(5)}, {Name: "b", MaxReplicas: num(5)}, {Name: "c"}}
	for _, tc := range []struct {
		name    string
		slots   []Slot
		ordinal int
		want    string
	}{
		{"ordinal 0", slots, 0, "a"},
		{"ordinal 4", slots, 4, "a"},
		{"ordinal 5", slots, 5, "b"},
		{"ordinal 10", slots, 10, "c"},
		{"no ordinal (-1) goes first", slots, -1, "a"},
		{"unschedulable a shifts b to [0,5)", []Slot{unschedulable(slots[0]), slots[1], slots[2]}, 4, "b"},
		{"percent reads as 0", []Slot{{Name: "a", MaxReplicas: pct("50%")}, {Name: "b", MaxReplicas: num(1)}}, 0, "b"},
		{"beyond every limit: none", slots[:2], 10, ""},
	} {
		if got := ChooseByOrdinal(tc.slots, tc.ordinal); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// An answered decision is recorded again on slots that moved on: relative to what they hold now,
// once only, never below zero, and not at all where nothing is kept.
func TestReplay(t *testing.T) {
	limited := func(missing int32, recorded ...string) []Slot {
		return []Slot{{Name: "a", MaxReplicas: ptr.To(intstr.FromInt32(3)), MissingReplicas: missing, Recorded: sets.New(recorded...)},
			{Name: "b", MissingReplicas: Unlimited, Recorded: sets.New[string]()}}
	}
	create := Change{Subset: "a", Key: "p", Creating: true, MissingReplicas: 2}
	for _, tc := range []struct {
		name  string
		slots []Slot
		c     Change
		want  *Change
	}{
		{"fewer missing now", limited(1), create, &Change{Subset: "a", Key: "p", Creating: true, MissingReplicas: 0}},
		{"recorded already", limited(2, "p"), create, nil},
		{"full meanwhile", limited(0), create, &Change{Subset: "a", Key: "p", Creating: true, MissingReplicas: 0}},
		{"unlimited", limited(1), Change{Subset: "b", Key: "p", Creating: true}, nil},
		{"subset gone", limited(1), Change{Subset: "c", Key: "p", Creating: true}, nil},
		{"deletion", limited(1), Change{Subset: "a", Key: "q", MissingReplicas: 3}, &Change{Subset: "a", Key: "q", MissingReplicas: 2}},
		{"deletion recorded already", limited(1, "q"), Change{Subset: "a", Key: "q", MissingReplicas: 3}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Replay(tc.slots, tc.c)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("Replay = %+v, want %+v", got, tc.want)
			}
		})
	}
}
