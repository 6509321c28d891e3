package statefulset

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Ordinals are the ordinals a StatefulSet's replicas have: the first replicas integers from start
// that reserveOrdinals does not reserve, ascending. A reserved ordinal is skipped and the range
// extends past it, so the set always has replicas members.
func Ordinals(start, replicas int32, reserved map[int]bool) []int {
	out := make([]int, 0, max(replicas, 0))
	for ord := int(start); len(out) < int(replicas); ord++ {
		if !reserved[ord] {
			out = append(out, ord)
		}
	}
	return out
}

// maxReservedRange bounds an "a-b" entry of reserveOrdinals, so that a typo cannot make the
// controller build a set of billions of ordinals.
const maxReservedRange = 100000

// ParseReserved reads reserveOrdinals: integers and "a-b" ranges (both ends included). An entry
// that is neither is an error naming it.
func ParseReserved(entries []intstr.IntOrString) (map[int]bool, error) {
	out := map[int]bool{}
	for i, e := range entries {
		if e.Type == intstr.Int {
			if e.IntVal < 0 {
				return nil, fmt.Errorf("reserveOrdinals[%d]: %d is negative", i, e.IntVal)
			}
			out[int(e.IntVal)] = true
			continue
		}
		lo, hi, err := parseRange(e.StrVal)
		if err != nil {
			return nil, fmt.Errorf("reserveOrdinals[%d]: %w", i, err)
		}
		for ord := lo; ord <= hi; ord++ {
			out[ord] = true
		}
	}
	return out, nil
}

func parseRange(s string) (int, int, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return n, n, nil
	}
	a, b, ok := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	switch {
	case !ok || err1 != nil || err2 != nil || lo < 0:
		return 0, 0, fmt.Errorf("%q is neither an ordinal nor a range \"a-b\"", s)
	case lo > hi:
		return 0, 0, fmt.Errorf("range %q ends before it starts", s)
	case hi-lo >= maxReservedRange:
		return 0, 0, fmt.Errorf("range %q reserves more than %d ordinals", s, maxReservedRange)
	}
	return lo, hi, nil
}

// OrdinalOf is the ordinal in a pod's name <set>-<ordinal>, or -1 when the name is not of that
// form (such a pod is not one of the set's replicas and is left alone).
func OrdinalOf(set, pod string) int {
	rest, ok := strings.CutPrefix(pod, set+"-")
	if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return -1
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// PodName is the name of the pod of ordinal ord.
func PodName(set string, ord int) string { return set + "-" + strconv.Itoa(ord) }

// ClaimName is the name of the PVC of claim template tmpl for the pod of ordinal ord.
func ClaimName(tmpl, set string, ord int) string { return tmpl + "-" + PodName(set, ord) }

// positions maps each replica ordinal to its position in ords (ascending).
func positions(ords []int) map[int]int {
	pos := make(map[int]int, len(ords))
	for i, o := range ords {
		pos[o] = i
	}
	return pos
}
