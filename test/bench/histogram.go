package main

import (
	"bytes"
	"context"
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// bucketCounts are a histogram's cumulative counts by upper bound, summed over the series whose
// labels match.
type bucketCounts map[float64]float64

// managerMetrics reads kruise-manager's metrics, by family name, as the sandbox's metrics scraper
// (bearer token of a ServiceAccount bound to kruise-metrics-reader, over TLS).
func managerMetrics(ctx context.Context, sb *sandbox.Sandbox) (map[string]*dto.MetricFamily, error) {
	raw, err := sb.ScrapeMetrics(ctx, sb.Ports.KruiseMetrics)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(raw))
}

// managerHistogram reads the histogram name from kruise-manager's metrics, summing the series
// whose label key has value (all series when key is empty).
func managerHistogram(ctx context.Context, sb *sandbox.Sandbox, name, key, value string) (bucketCounts, error) {
	families, err := managerMetrics(ctx, sb)
	if err != nil {
		return nil, err
	}
	out := bucketCounts{}
	f := families[name]
	if f == nil {
		return out, nil
	}
	for _, m := range f.GetMetric() {
		if (key != "" && !hasLabel(m, key, value)) || m.GetHistogram() == nil {
			continue
		}
		for _, b := range m.GetHistogram().GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) { // the text format lists +Inf as a bucket too
				out[b.GetUpperBound()] += float64(b.GetCumulativeCount())
			}
		}
		out[math.Inf(1)] += float64(m.GetHistogram().GetSampleCount())
	}
	return out, nil
}

// hasLabel reports whether m has label key with value.
func hasLabel(m *dto.Metric, key, value string) bool { return labelOf(m, key) == value }

// labelOf is the value of m's label name ("" without it).
func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// quantile is the q-quantile of the observations between before and after, interpolated
// linearly within its bucket (Prometheus' histogram_quantile), in the histogram's unit; NaN when
// there are none.
func quantile(before, after bucketCounts, q float64) float64 {
	bounds := make([]float64, 0, len(after))
	for b := range after {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	total := after[math.Inf(1)] - before[math.Inf(1)]
	if total <= 0 {
		return math.NaN()
	}
	rank, lower, below := q*total, 0.0, 0.0
	for _, b := range bounds {
		count := after[b] - before[b]
		if count >= rank {
			if math.IsInf(b, 1) {
				return lower
			}
			return lower + (b-lower)*(rank-below)/math.Max(count-below, 1e-9)
		}
		lower, below = b, count
	}
	return lower
}
