package validating

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
)

// ranges are n back-to-back reserveOrdinals ranges of width ordinals from 0.
func ranges(n, width int) []intstr.IntOrString {
	out := make([]intstr.IntOrString, n)
	for i := range out {
		out[i] = intstr.FromString(fmt.Sprintf("%d-%d", i*width, (i+1)*width-1))
	}
	return out
}

// The bounds of pkg/core/ordinal (issue 33): each refusal names the field, the bound and why, in
// the message the API server returns.
func TestValidateStatefulSetBounds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*v1beta1.StatefulSetSpec)
		want    []want
		message []string
	}{
		{"replicas at the bound", func(s *v1beta1.StatefulSetSpec) { s.Replicas = ptr.To[int32](ordinal.MaxReplicas) }, nil, nil},
		{"replicas above the bound", func(s *v1beta1.StatefulSetSpec) { s.Replicas = ptr.To[int32](ordinal.MaxReplicas + 1) },
			[]want{{field.ErrorTypeInvalid, "spec.replicas"}},
			[]string{"spec.replicas: Invalid value: 100001: must be at most 100000: kruise-manager tracks every replica", "memory"}},
		{"replicas 2^31-1", func(s *v1beta1.StatefulSetSpec) { s.Replicas = ptr.To[int32](math.MaxInt32) },
			[]want{{field.ErrorTypeInvalid, "spec.replicas"}}, []string{"spec.replicas: Invalid value: 2147483647: must be at most 100000"}},
		{"100 entries reserving 100000 ordinals", func(s *v1beta1.StatefulSetSpec) { s.ReserveOrdinals = ranges(100, 1000) }, nil, nil},
		{"300 ranges of 100000", func(s *v1beta1.StatefulSetSpec) { s.ReserveOrdinals = ranges(300, ordinal.MaxReservedRange) },
			[]want{{field.ErrorTypeTooMany, "spec.reserveOrdinals"}},
			[]string{"spec.reserveOrdinals: Too many: 300: must have at most 100 entries: each entry is an ordinal or a range"}},
		{"101 single ordinals", func(s *v1beta1.StatefulSetSpec) {
			for i := range 101 {
				s.ReserveOrdinals = append(s.ReserveOrdinals, intstr.FromInt32(int32(i)))
			}
		}, []want{{field.ErrorTypeTooMany, "spec.reserveOrdinals"}}, []string{"Too many: 101: must have at most 100 entries"}},
		{"two ranges of 100000", func(s *v1beta1.StatefulSetSpec) { s.ReserveOrdinals = ranges(2, ordinal.MaxReservedRange) },
			[]want{{field.ErrorTypeInvalid, "spec.reserveOrdinals"}},
			[]string{`spec.reserveOrdinals: Invalid value: "200000 reserved ordinals": must reserve at most 100000 ordinals in all`}},
		{"overlapping ranges count once", func(s *v1beta1.StatefulSetSpec) {
			s.ReserveOrdinals = []intstr.IntOrString{intstr.FromString("0-99999"), intstr.FromString("50000-99999"), intstr.FromInt32(7)}
		}, nil, nil},
		{"a bad entry is reported, not the total", func(s *v1beta1.StatefulSetSpec) {
			s.ReserveOrdinals = append(ranges(2, ordinal.MaxReservedRange), intstr.FromString("x"))
		}, []want{{field.ErrorTypeInvalid, "spec.reserveOrdinals[2]"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sts := validStatefulSet()
			tc.mutate(&sts.Spec)
			errs := ValidateStatefulSet(sts)
			checkErrors(t, errs, tc.want)
			if len(errs) == 0 {
				return
			}
			msg := errs.ToAggregate().Error()
			for _, m := range tc.message {
				if !strings.Contains(msg, m) {
					t.Errorf("message %q does not say %q", msg, m)
				}
			}
			if len(msg) > 1000 {
				t.Errorf("message of %d bytes: %.200s…", len(msg), msg)
			}
		})
	}
}

// A set stored beyond the bounds (by OpenKruise, or while the webhook was off) may be stored again
// unchanged, and brought within them; any other change is refused while it is beyond.
func TestValidateStatefulSetUpdateBeyondBounds(t *testing.T) {
	old := validStatefulSet()
	old.Spec.ReserveOrdinals = ranges(300, 10)
	if errs := ValidateStatefulSetUpdate(old.DeepCopy(), old); len(errs) != 0 {
		t.Errorf("unchanged: %v", errs.ToAggregate())
	}
	changed := old.DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "postgres:2"
	checkErrors(t, ValidateStatefulSetUpdate(changed, old), []want{{field.ErrorTypeTooMany, "spec.reserveOrdinals"}})
	fixed := old.DeepCopy()
	fixed.Spec.ReserveOrdinals = []intstr.IntOrString{intstr.FromString("0-2999")}
	if errs := ValidateStatefulSetUpdate(fixed, old); len(errs) != 0 {
		t.Errorf("brought within the bounds: %v", errs.ToAggregate())
	}
}
