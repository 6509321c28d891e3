package main

import (
	"math"
	"testing"
)

// The quantile of the observations between two reads, interpolated within its bucket.
func TestQuantile(t *testing.T) {
	inf := math.Inf(1)
	before := bucketCounts{0.001: 10, 0.01: 10, 0.1: 10, inf: 10}
	// 100 new observations: 50 up to 1 ms, 40 more up to 10 ms, 10 more up to 100 ms.
	after := bucketCounts{0.001: 60, 0.01: 100, 0.1: 110, inf: 110}
	for _, tc := range []struct{ q, want float64 }{{0.5, 0.001}, {0.7, 0.001 + 0.009*20/40}, {0.99, 0.01 + 0.09*9/10}} {
		if got := quantile(before, after, tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := quantile(after, after, 0.5); !math.IsNaN(got) {
		t.Errorf("no observations: %v, want NaN", got)
	}
}
