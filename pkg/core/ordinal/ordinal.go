package ordinal

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxReservedRange bounds an "a-b" entry of reserveOrdinals (a typo such as "1-1000000000" is
// refused by the webhook and by the controller); the bounds of the whole list are in bounds.go.
const MaxReservedRange = 100000

// ParseRange reads a reserveOrdinals range "first-last" (decimal digits only, no sign or space;
// first ≤ last ≤ 2147483647, at most MaxReservedRange ordinals), the form OpenKruise v1.9.0
// accepts; "3-5" stands for 3, 4 and 5.
func ParseRange(s string) (first, last int32, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok || !decimalDigits(a) || !decimalDigits(b) {
		return 0, 0, errors.New("must be an ordinal (an integer, not a string) or a range 'first-last' such as '3-5'")
	}
	x, errA := strconv.ParseInt(a, 10, 32)
	y, errB := strconv.ParseInt(b, 10, 32)
	if errA != nil || errB != nil {
		return 0, 0, fmt.Errorf("ordinals must not exceed %d", math.MaxInt32)
	}
	switch {
	case x > y:
		return 0, 0, fmt.Errorf("the range's first ordinal (%d) must not be greater than its last (%d)", x, y)
	case y-x >= MaxReservedRange:
		return 0, 0, fmt.Errorf("a range may reserve at most %d ordinals", MaxReservedRange)
	}
	return int32(x), int32(y), nil
}

// decimalDigits reports whether s is one or more ASCII digits.
func decimalDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
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
