package ordinal

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/pkg/platform/allocs"
)

func TestNewReservedMergesIntervals(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    []Interval
		want  []Interval
		count int
	}{
		{"empty", nil, []Interval{}, 0},
		{"one ordinal", []Interval{{4, 4}}, []Interval{{4, 4}}, 1},
		{"unsorted, disjoint", []Interval{{10, 12}, {1, 2}}, []Interval{{1, 2}, {10, 12}}, 5},
		{"overlapping counted once", []Interval{{1, 5}, {3, 8}}, []Interval{{1, 8}}, 8},
		{"adjacent merged", []Interval{{1, 2}, {3, 4}, {6, 6}}, []Interval{{1, 4}, {6, 6}}, 5},
		{"contained", []Interval{{0, 100}, {5, 6}, {100, 100}}, []Interval{{0, 100}}, 101},
		{"duplicates", []Interval{{7, 7}, {7, 7}}, []Interval{{7, 7}}, 1},
		{"inverted reserves nothing", []Interval{{5, 3}, {9, 9}}, []Interval{{9, 9}}, 1},
		{"at the int32 edge", []Interval{{math.MaxInt32 - 1, math.MaxInt32}, {0, 0}}, []Interval{{0, 0}, {math.MaxInt32 - 1, math.MaxInt32}}, 3},
	} {
		r := NewReserved(c.in...)
		if got := r.Intervals(); !slices.Equal(got, c.want) {
			t.Errorf("%s: NewReserved(%v) = %v, want %v", c.name, c.in, got, c.want)
		}
		if got := r.Count(); got != c.count {
			t.Errorf("%s: Count() = %d, want %d", c.name, got, c.count)
		}
	}
}

func TestReservedQueries(t *testing.T) {
	r := NewReserved(Interval{2, 4}, Interval{8, 8}, Interval{10, 11})
	for _, c := range []struct {
		ord      int
		contains bool
		below    int
	}{{0, false, 0}, {2, true, 0}, {3, true, 1}, {4, true, 2}, {5, false, 3}, {8, true, 3}, {9, false, 4},
		{10, true, 4}, {11, true, 5}, {12, false, 6}, {1000, false, 6}, {-1, false, 0}} {
		if got := r.Contains(c.ord); got != c.contains {
			t.Errorf("Contains(%d) = %v, want %v", c.ord, got, c.contains)
		}
		if got := r.CountBelow(c.ord); got != c.below {
			t.Errorf("CountBelow(%d) = %d, want %d", c.ord, got, c.below)
		}
	}
	var zero Reserved
	if zero.Contains(0) || zero.Count() != 0 || zero.CountBelow(5) != 0 {
		t.Errorf("the zero Reserved is not empty: %v %d %d", zero.Contains(0), zero.Count(), zero.CountBelow(5))
	}
}

func TestReplicasPositions(t *testing.T) {
	for _, c := range []struct {
		name            string
		start, replicas int32
		reserved        []Interval
		want            []int
	}{
		{"plain", 0, 3, nil, []int{0, 1, 2}},
		{"none", 0, 0, []Interval{{0, 3}}, []int{}},
		{"negative replicas", 0, -2, nil, []int{}},
		{"start", 5, 2, nil, []int{5, 6}},
		{"skips and extends", 0, 4, []Interval{{1, 2}, {4, 4}}, []int{0, 3, 5, 6}},
		{"reserved below start ignored", 10, 2, []Interval{{0, 9}, {11, 11}}, []int{10, 12}},
		{"start inside a reserved range", 3, 2, []Interval{{2, 5}}, []int{6, 7}},
		{"reserved beyond the replicas", 0, 2, []Interval{{50, 60}}, []int{0, 1}},
		{"start at the int32 edge", math.MaxInt32, 2, []Interval{{math.MaxInt32, math.MaxInt32}}, []int{math.MaxInt32 + 1, math.MaxInt32 + 2}},
	} {
		s := NewReplicas(c.start, c.replicas, NewReserved(c.reserved...))
		got := slices.Collect(s.All())
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%s: All() = %v, want %v", c.name, got, c.want)
			continue
		}
		if s.Len() != len(c.want) {
			t.Errorf("%s: Len() = %d, want %d", c.name, s.Len(), len(c.want))
		}
		for i, ord := range c.want {
			if pos, ok := s.Position(ord); !ok || pos != i {
				t.Errorf("%s: Position(%d) = %d, %v; want %d, true", c.name, ord, pos, ok, i)
			}
		}
		for _, ord := range []int{int(c.start) - 1, 1, 4, 11, 61, int(c.start) + len(c.want) + len(c.reserved)*100} {
			if _, ok := s.Position(ord); ok != slices.Contains(c.want, ord) || s.Contains(ord) != ok {
				t.Errorf("%s: Position(%d) says replica %v, want %v", c.name, ord, ok, slices.Contains(c.want, ord))
			}
		}
	}
}

// TestReplicasAgainstAModel compares every answer with a set of every ordinal, on seeded random
// reservations over a small range.
func TestReplicasAgainstAModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 5))
	for round := range 2000 {
		var ivs []Interval
		model := map[int]bool{}
		for range rng.IntN(6) {
			first := rng.IntN(40)
			iv := Interval{first, first + rng.IntN(6) - 1} // sometimes inverted: empty
			ivs = append(ivs, iv)
			for o := iv.First; o <= iv.Last; o++ {
				model[o] = true
			}
		}
		start, replicas := int32(rng.IntN(10)), int32(rng.IntN(20))
		r := NewReserved(ivs...)
		s := NewReplicas(start, replicas, r)
		var want []int
		for o := int(start); len(want) < int(replicas); o++ {
			if !model[o] {
				want = append(want, o)
			}
		}
		if got := slices.Collect(s.All()); !slices.Equal(got, want) {
			t.Fatalf("round %d: reserved %v, start %d, replicas %d: All() = %v, want %v", round, ivs, start, replicas, got, want)
		}
		if r.Count() != len(model) {
			t.Fatalf("round %d: reserved %v: Count() = %d, want %d", round, ivs, r.Count(), len(model))
		}
		below := 0
		for o := -1; o < 70; o++ {
			pos := slices.Index(want, o)
			if got, ok := s.Position(o); ok != (pos >= 0) || (ok && got != pos) {
				t.Fatalf("round %d: reserved %v, start %d: Position(%d) = %d, %v; want %d", round, ivs, start, o, got, ok, pos)
			}
			if r.Contains(o) != model[o] || r.CountBelow(o) != below {
				t.Fatalf("round %d: reserved %v: Contains(%d) = %v, CountBelow = %d; want %v, %d", round, ivs, o, r.Contains(o), r.CountBelow(o), model[o], below)
			}
			if model[o] {
				below++
			}
		}
	}
}

// attack is n ranges of width ordinals each, back to back from 0.
func attack(n, width int) []intstr.IntOrString {
	out := make([]intstr.IntOrString, n)
	for i := range out {
		out[i] = intstr.FromString(fmt.Sprintf("%d-%d", i*width, (i+1)*width-1))
	}
	return out
}

// TestMemoryFollowsEntriesNotOrdinals is the attack that took the manager down: 300 ranges of
// 100,000 ordinals (30 million) built a set of each. Read as intervals, they take a few KiB, and
// walking the replicas allocates nothing.
func TestMemoryFollowsEntriesNotOrdinals(t *testing.T) {
	entries := attack(300, MaxReservedRange)
	var r Reserved
	if n := allocs.Bytes(func() {
		var err error
		if r, err = ParseReserved(entries); err != nil {
			t.Fatal(err)
		}
	}); n > 64<<10 {
		t.Errorf("ParseReserved of 300 ranges of %d allocated %d bytes, want < 64 KiB", MaxReservedRange, n)
	}
	if r.Count() != 300*MaxReservedRange || len(r.Intervals()) != 1 {
		t.Errorf("300 back-to-back ranges: %d intervals reserving %d, want 1 reserving %d", len(r.Intervals()), r.Count(), 300*MaxReservedRange)
	}
	s := NewReplicas(0, math.MaxInt32, r)
	if n := allocs.Bytes(func() {
		for ord := range s.All() {
			if ord >= 300*MaxReservedRange+10 {
				break
			}
		}
		if pos, ok := s.Position(300*MaxReservedRange + 5); !ok || pos != 5 {
			t.Errorf("Position after the reserved ranges = %d, %v; want 5, true", pos, ok)
		}
	}); n > 4<<10 {
		t.Errorf("walking replicas 2^31-1 past 30M reserved ordinals allocated %d bytes, want < 4 KiB", n)
	}
}

func TestBounded(t *testing.T) {
	for _, c := range []struct {
		name     string
		replicas int32
		entries  []intstr.IntOrString
		want     []string // in the error; none: accepted
	}{
		{"within bounds", MaxReplicas, attack(MaxReserveEntries, MaxReservedOrdinals/MaxReserveEntries), nil},
		{"replicas 2^31-1", math.MaxInt32, nil, []string{"spec.replicas", "2147483647 replicas", "more than the 100000 accepted", "memory"}},
		{"300 ranges", 3, attack(300, MaxReservedRange), []string{"spec.reserveOrdinals", "300 entries", "more than the 100 accepted"}},
		{"101 ordinals", 3, attack(MaxReserveEntries+1, 1), []string{"spec.reserveOrdinals", "101 entries"}},
		{"too many ordinals in all", 3, attack(2, MaxReservedRange), []string{"spec.reserveOrdinals", "200000 reserved ordinals", "more than the 100000 accepted"}},
		{"overlaps count once", 3, []intstr.IntOrString{intstr.FromString("0-99999"), intstr.FromString("0-99999"), intstr.FromInt32(5)}, nil},
		{"unreadable entry", 3, []intstr.IntOrString{intstr.FromInt32(1), intstr.FromString("x")}, []string{"spec.reserveOrdinals[1]"}},
		{"negative entry", 3, []intstr.IntOrString{intstr.FromInt32(-1)}, []string{"spec.reserveOrdinals[0]", "negative"}},
	} {
		s, err := Bounded(0, c.replicas, c.entries)
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want == nil && s.Len() != int(c.replicas):
			t.Errorf("%s: %d replicas, want %d", c.name, s.Len(), c.replicas)
		case c.want != nil && err == nil:
			t.Errorf("%s: accepted, want an error with %q", c.name, c.want)
		case c.want != nil:
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %q does not say %q", c.name, err, w)
				}
			}
		}
	}
}
