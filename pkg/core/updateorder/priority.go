package updateorder

import (
	"cmp"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// Priority returns the comparison of two pods' labels under s: negative when a is updated before
// b, 0 when s does not tell them apart. Callers sort stably with it, so that pods it ties keep the
// order they had (OpenKruise v1.9.0 sorts stably since openkruise/kruise#2107). It is nil when s
// sets no terms.
//
//   - weightPriority: a pod's priority is the sum of the weights of the terms whose selector
//     matches it; higher first. An empty selector matches every pod and an invalid one matches
//     none (the validating webhook rejects both).
//   - orderPriority: pods that carry none of the listed keys come first. The others rank by the
//     first listed key they carry (an earlier key first), then by the integer formed by the
//     digits at the end of that label's value, higher first ("sts-10" → 10, "o-05" → 5; a value
//     without trailing digits, or whose digits overflow int64, counts as 0).
//
// With both set (the validating webhook forbids it) weightPriority is used.
func Priority(s *appspub.UpdatePriorityStrategy) func(a, b map[string]string) int {
	switch {
	case s == nil:
		return nil
	case len(s.WeightPriority) > 0:
		return weights(s.WeightPriority)
	case len(s.OrderPriority) > 0:
		return orders(s.OrderPriority)
	}
	return nil
}

func weights(terms []appspub.UpdatePriorityWeightTerm) func(a, b map[string]string) int {
	type term struct {
		sel    labels.Selector
		weight int64
	}
	var ts []term
	for i := range terms {
		sel, err := metav1.LabelSelectorAsSelector(&terms[i].MatchSelector)
		if err != nil {
			continue
		}
		ts = append(ts, term{sel, int64(terms[i].Weight)})
	}
	score := func(l map[string]string) int64 {
		var sum int64
		for _, t := range ts {
			if t.sel.Matches(labels.Set(l)) {
				sum += t.weight
			}
		}
		return sum
	}
	return func(a, b map[string]string) int { return cmp.Compare(score(b), score(a)) }
}

func orders(terms []appspub.UpdatePriorityOrderTerm) func(a, b map[string]string) int {
	rank := func(l map[string]string) (level int, value int64) {
		for i, t := range terms {
			if v, ok := l[t.OrderedKey]; ok {
				return i, trailingInt(v)
			}
		}
		return -1, 0 // none of the keys: before every pod that has one
	}
	return func(a, b map[string]string) int {
		la, va := rank(a)
		lb, vb := rank(b)
		if c := cmp.Compare(la, lb); c != 0 {
			return c
		}
		return cmp.Compare(vb, va)
	}
}

// trailingInt is the integer formed by the digits at the end of s; 0 without any (or on overflow).
func trailingInt(s string) int64 {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.ParseInt(s[i:], 10, 64)
	if err != nil {
		return 0
	}
	return n
}
