package ordinal

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Interval is the ordinals First to Last, both included (First ≤ Last).
type Interval struct{ First, Last int }

// Reserved is a set of ordinals kept as sorted, disjoint, non-adjacent intervals: its memory grows
// with the reserveOrdinals entries, never with the ordinals they reserve. The zero Reserved is empty.
// A Reserved is never modified once built.
type Reserved struct {
	intervals []Interval
	// below[i] is the number of ordinals the intervals before intervals[i] reserve.
	below []int
}

// NewReserved is the union of intervals (in any order, overlapping or not); an interval whose
// First is above its Last reserves nothing.
func NewReserved(intervals ...Interval) Reserved {
	ivs := slices.DeleteFunc(slices.Clone(intervals), func(iv Interval) bool { return iv.First > iv.Last })
	slices.SortFunc(ivs, func(a, b Interval) int { return cmp.Compare(a.First, b.First) })
	merged := ivs[:0]
	for _, iv := range ivs {
		if n := len(merged); n > 0 && iv.First <= merged[n-1].Last+1 {
			merged[n-1].Last = max(merged[n-1].Last, iv.Last)
			continue
		}
		merged = append(merged, iv)
	}
	r := Reserved{intervals: slices.Clip(merged), below: make([]int, len(merged))}
	total := 0
	for i, iv := range merged {
		r.below[i] = total
		total += iv.Last - iv.First + 1
	}
	return r
}

// ParseReserved reads reserveOrdinals: integers ≥ 0 and "first-last" ranges (ParseRange). An entry
// that is neither is an error naming its path (spec.reserveOrdinals[i]). It bounds nothing but the
// width of a range: CheckReserved applies the other bounds.
func ParseReserved(entries []intstr.IntOrString) (Reserved, error) {
	ivs := make([]Interval, 0, len(entries))
	for i, e := range entries {
		switch e.Type {
		case intstr.Int:
			if e.IntVal < 0 {
				return Reserved{}, fmt.Errorf("spec.reserveOrdinals[%d]: %d is negative", i, e.IntVal)
			}
			ivs = append(ivs, Interval{int(e.IntVal), int(e.IntVal)})
		case intstr.String:
			lo, hi, err := ParseRange(e.StrVal)
			if err != nil {
				return Reserved{}, fmt.Errorf("spec.reserveOrdinals[%d]: %w", i, err)
			}
			ivs = append(ivs, Interval{int(lo), int(hi)})
		default:
			return Reserved{}, fmt.Errorf("spec.reserveOrdinals[%d]: must be an ordinal or a range such as '3-5'", i)
		}
	}
	return NewReserved(ivs...), nil
}

// Intervals are the reserved ordinals as sorted, disjoint, non-adjacent intervals (a copy).
func (r Reserved) Intervals() []Interval { return slices.Clone(r.intervals) }

// Count is how many ordinals are reserved.
func (r Reserved) Count() int {
	if len(r.intervals) == 0 {
		return 0
	}
	last := r.intervals[len(r.intervals)-1]
	return r.below[len(r.below)-1] + last.Last - last.First + 1
}

// Contains reports whether ord is reserved.
func (r Reserved) Contains(ord int) bool {
	i := r.search(ord)
	return i < len(r.intervals) && r.intervals[i].First <= ord
}

// CountBelow is how many reserved ordinals are lower than ord.
func (r Reserved) CountBelow(ord int) int {
	i := r.search(ord)
	if i < len(r.intervals) && r.intervals[i].First < ord {
		return r.below[i] + ord - r.intervals[i].First
	}
	if i == len(r.intervals) {
		return r.Count()
	}
	return r.below[i]
}

// search is the index of the first interval whose Last is ≥ ord (len(intervals) when none).
func (r Reserved) search(ord int) int {
	return sort.Search(len(r.intervals), func(i int) bool { return r.intervals[i].Last >= ord })
}
