package ordinal

import (
	"math"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestOrdinals(t *testing.T) {
	reserved, err := ParseReserved([]intstr.IntOrString{intstr.FromInt32(1), intstr.FromString("4-5"), intstr.FromInt32(9)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Collect(NewReplicas(0, 5, reserved).All()), []int{0, 2, 3, 6, 7}; !slices.Equal(got, want) {
		t.Errorf("replicas(0, 5, 1+4-5+9) = %v, want %v", got, want)
	}
	if got, want := slices.Collect(NewReplicas(3, 3, reserved).All()), []int{3, 6, 7}; !slices.Equal(got, want) {
		t.Errorf("replicas(3, 3, …) = %v, want %v", got, want)
	}
	for _, bad := range []string{"a", "5-3", "-1", "1-", "0-1000000", "9", " 1-2"} {
		if _, err := ParseReserved([]intstr.IntOrString{intstr.FromString(bad)}); err == nil {
			t.Errorf("reserveOrdinals %q accepted", bad)
		}
	}
	for name, want := range map[string]int{"web-0": 0, "web-12": 12, "web-01": -1, "web-": -1, "web-x": -1, "webx-1": -1, "web-1-2": -1} {
		if got := OrdinalOf("web", name); got != want {
			t.Errorf("OrdinalOf(web, %s) = %d, want %d", name, got, want)
		}
	}
}

func TestParseOrdinalRange(t *testing.T) {
	for _, c := range []struct {
		in          string
		first, last int32
	}{{"3-5", 3, 5}, {"7-7", 7, 7}, {"007-010", 7, 10}, {"2147483000-2147483647", 2147483000, math.MaxInt32}} {
		first, last, err := ParseRange(c.in)
		if err != nil || first != c.first || last != c.last {
			t.Errorf("ParseRange(%q) = %d, %d, %v; want %d, %d", c.in, first, last, err, c.first, c.last)
		}
	}
}
