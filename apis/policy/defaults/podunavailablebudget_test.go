package defaults

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/policy/v1alpha1"
)

func TestSetDefaultsPodUnavailableBudget(t *testing.T) {
	mu := intstr.FromString("30%")
	for _, in := range []*v1alpha1.PodUnavailableBudget{
		{},
		{Spec: v1alpha1.PodUnavailableBudgetSpec{MaxUnavailable: &mu}},
	} {
		got := in.DeepCopy()
		SetDefaultsPodUnavailableBudget(got)
		if !reflect.DeepEqual(got, in) {
			t.Errorf("got %+v, want %+v", got, in)
		}
		again := got.DeepCopy()
		SetDefaultsPodUnavailableBudget(again)
		if !reflect.DeepEqual(again, got) {
			t.Errorf("not idempotent")
		}
	}
}
