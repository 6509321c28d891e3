package ordinal

import "iter"

// Replicas are the ordinals a StatefulSet's replicas have: the first Len() integers from start that
// the Reserved does not hold, ascending. A reserved ordinal is skipped and the range extends past
// it, so the set always has replicas members. A Replicas takes memory in proportion to its reserved
// intervals only; every question it answers is O(log intervals), and All walks the intervals.
type Replicas struct {
	start, count int
	reserved     Reserved
}

// NewReplicas are the ordinals of replicas replicas from start, skipping reserved (a negative
// replicas or start counts as 0).
func NewReplicas(start, replicas int32, reserved Reserved) Replicas {
	return Replicas{start: int(max(start, 0)), count: int(max(replicas, 0)), reserved: reserved}
}

// Len is the number of replicas.
func (s Replicas) Len() int { return s.count }

// Reserved are the ordinals the replicas skip.
func (s Replicas) Reserved() Reserved { return s.reserved }

// Position is ord's place among the replicas (0 for the first, ascending), and whether ord is a
// replica's ordinal at all (below start, reserved, or beyond the last: not).
func (s Replicas) Position(ord int) (int, bool) {
	if ord < s.start || s.reserved.Contains(ord) {
		return 0, false
	}
	pos := ord - s.start - (s.reserved.CountBelow(ord) - s.reserved.CountBelow(s.start))
	return pos, pos < s.count
}

// Contains reports whether ord is a replica's ordinal.
func (s Replicas) Contains(ord int) bool {
	_, ok := s.Position(ord)
	return ok
}

// All yields the replicas' ordinals, ascending, without building them: a loop that stops early
// costs what it visited.
func (s Replicas) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		ivs := s.reserved.intervals
		next := s.reserved.search(s.start) // the first interval that may hold an ordinal ≥ start
		ord := s.start
		for n := 0; n < s.count; {
			if next < len(ivs) && ord >= ivs[next].First {
				ord = max(ord, ivs[next].Last+1)
				next++
				continue
			}
			if !yield(ord) {
				return
			}
			ord++
			n++
		}
	}
}
