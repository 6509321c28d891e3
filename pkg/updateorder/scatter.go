package updateorder

import (
	"math"
	"slices"
)

// Term selects pods by one label: key equal to value (a missing key reads as "").
type Term struct {
	Key   string
	Value string
}

// Scatter reorders items, an update order, so that the items matching each term are spread
// evenly over it: with n items of which m > 1 match, the matching items take positions
// round(k·(n−1)/(m−1)) for k = 0…m−1 (first and last included; 3 of 10 → positions 1, 6, 10),
// in their previous relative order, and the others fill the remaining positions in theirs. A
// term matched by fewer than two items, or by all of them, changes nothing. With several terms,
// the terms matched by more items go first (ties keep their listed order; duplicates count once),
// each applied to the order the previous one left. Scatter returns a new slice.
func Scatter[T any](items []T, terms []Term, labelsOf func(T) map[string]string) []T {
	out := slices.Clone(items)
	if len(terms) == 0 || len(out) < 2 {
		return out
	}
	matches := func(it T, t Term) bool { return labelsOf(it)[t.Key] == t.Value }
	type counted struct {
		t Term
		n int
	}
	var ts []counted
	for _, t := range terms {
		if slices.ContainsFunc(ts, func(c counted) bool { return c.t == t }) {
			continue
		}
		n := 0
		for _, it := range out {
			if matches(it, t) {
				n++
			}
		}
		ts = append(ts, counted{t, n})
	}
	slices.SortStableFunc(ts, func(a, b counted) int { return b.n - a.n })
	for _, c := range ts {
		out = spread(out, func(it T) bool { return matches(it, c.t) })
	}
	return out
}

// spread places the items for which match holds evenly over the order.
func spread[T any](items []T, match func(T) bool) []T {
	var m, u []T
	for _, it := range items {
		if match(it) {
			m = append(m, it)
		} else {
			u = append(u, it)
		}
	}
	n := len(items)
	if len(m) < 2 || len(u) == 0 {
		return items
	}
	at := make(map[int]bool, len(m))
	for k := range m {
		at[int(math.Round(float64(k)*float64(n-1)/float64(len(m)-1)))] = true
	}
	out := make([]T, 0, n)
	for i := 0; i < n; i++ {
		if at[i] {
			out, m = append(out, m[0]), m[1:]
		} else {
			out, u = append(out, u[0]), u[1:]
		}
	}
	return out
}
