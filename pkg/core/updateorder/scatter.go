package updateorder

import (
	"cmp"
	"math"
	"slices"
)

// Term selects pods by one label: key equal to value.
type Term struct {
	Key   string
	Value string
}

// matches reports whether labels l match t; a missing key reads as "".
func (t Term) matches(l map[string]string) bool { return l[t.Key] == t.Value }

// Scatter reorders items, the pods waiting for an update in update order, so that the pods
// matching each term are spread over the update instead of being updated next to each other. It
// yields the order OpenKruise v1.9.0's scatter sort yields (pkg/util/updatesort in
// openkruise/kruise). population holds the labels of all the workload's pods, items included: the
// spread keeps the density of matching pods the whole workload has.
//
// With several terms, each term is applied in turn to the order the previous one left: the terms
// matched (key present, value equal) by more items first, ties in their listed order; a term no
// item matches is left out. A single term is applied as it is. Duplicate terms count once (the
// validating webhook rejects them). See spread for one term. Scatter returns a new slice.
func Scatter[T any](items []T, population []map[string]string, terms []Term, labelsOf func(T) map[string]string) []T {
	out := slices.Clone(items)
	if len(terms) == 0 || len(out) < 2 {
		return out
	}
	if len(terms) > 1 {
		terms = byMatches(out, terms, labelsOf)
	}
	for _, t := range terms {
		out = spread(out, population, t, labelsOf)
	}
	return out
}

// byMatches orders the distinct terms by how many items carry their key with their value, most
// first (stable), leaving out the terms no item carries.
func byMatches[T any](items []T, terms []Term, labelsOf func(T) map[string]string) []Term {
	count := map[Term]int{}
	var ts []Term
	for _, t := range terms {
		if _, seen := count[t]; seen {
			continue
		}
		n := 0
		for _, it := range items {
			if v, ok := labelsOf(it)[t.Key]; ok && v == t.Value {
				n++
			}
		}
		count[t] = n
		if n > 0 {
			ts = append(ts, t)
		}
	}
	slices.SortStableFunc(ts, func(a, b Term) int { return cmp.Compare(count[b], count[a]) })
	return ts
}

// spread applies one term. With m items matching it and u not (each list keeping its order), it
// changes nothing unless m ≥ 2 and u ≥ 2. The last matching item goes to the very end; the other
// m−1 are laid out in rounds of matching then non-matching items (see groups), any non-matching
// lead first, and what the rounds leave of the matching then of the non-matching items follows.
func spread[T any](items []T, population []map[string]string, t Term, labelsOf func(T) map[string]string) []T {
	var m, u []T
	for _, it := range items {
		if t.matches(labelsOf(it)) {
			m = append(m, it)
		} else {
			u = append(u, it)
		}
	}
	if len(m) < 2 || len(u) < 2 {
		return items
	}
	var tm, tu int
	for _, l := range population {
		if t.matches(l) {
			tm++
		} else {
			tu++
		}
	}
	// The population includes the items; never count fewer (and never divide by zero).
	tm, tu = max(tm, len(m)), max(tu, len(u))
	last := m[len(m)-1]
	m = m[:len(m)-1]
	g := groups(tm-1, tu, len(m), len(u))
	out := make([]T, 0, len(items))
	out, u = take(out, u, g.lead)
	for range g.rounds {
		out, m = take(out, m, g.matched)
		out, u = take(out, u, g.unmatched)
	}
	out = append(append(out, m...), u...)
	return append(out, last)
}

// take moves the first n items of src (all of them when fewer) to the end of dst.
func take[T any](dst, src []T, n int) ([]T, []T) {
	n = min(n, len(src))
	return append(dst, src[:n]...), src[n:]
}

// layout is how spread interleaves: lead non-matching items first, then rounds of matched
// matching and unmatched non-matching items.
type layout struct {
	rounds, matched, unmatched, lead int
}

// groups chooses the layout for m matching and u non-matching items (the last matching one set
// aside) in a workload with tm matching (the set-aside one not counted) and tu non-matching pods.
// When the workload's non-matching to matching ratio, compared in single precision, is at least
// the items', the items are split evenly by their own counts (even(m, u)). Otherwise the round
// sizes are those of the workload (even(tm, tu)), as many rounds as both lists fill completely,
// and the non-matching items those rounds leave over lead.
func groups(tm, tu, m, u int) layout {
	if float32(tu)/float32(tm) >= float32(u)/float32(m) {
		return even(m, u)
	}
	g := even(tm, tu)
	g.rounds = min(m/g.matched, u/g.unmatched)
	g.lead = u - g.rounds*g.unmatched
	return g
}

// even splits a matching and b non-matching pods into min(a, b) rounds of round(a/rounds) and
// round(b/rounds) pods (halves rounded away from zero).
func even(a, b int) layout {
	n := min(a, b)
	return layout{rounds: n,
		matched:   int(math.Round(float64(a) / float64(n))),
		unmatched: int(math.Round(float64(b) / float64(n)))}
}
