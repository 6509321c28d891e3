package cloneset

import (
	"testing"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// BenchmarkCompute10000 plans one step of a 10,000-pod in-place rollout at maxUnavailable 20%:
// what every reconcile of a large CloneSet pays, whatever it writes.
func BenchmarkCompute10000(b *testing.B) {
	s := cs(10000, updateType(v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType), maxUnavailable("20%"),
		pods("a", "v1", 5000), pods("b", "v2", 5000))
	b.ReportAllocs()
	for b.Loop() {
		Compute(s, t0, Options{})
	}
}
