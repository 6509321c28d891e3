package updateorder

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

type pod struct {
	name   string
	labels map[string]string
}

func names(ps []pod) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.name)
	}
	return strings.Join(out, " ")
}

// sortBy sorts pods stably by s, as OpenKruise v1.9.0's priority sorter does.
func sortBy(pods []pod, s *appspub.UpdatePriorityStrategy) string {
	less := Priority(s)
	out := slices.Clone(pods)
	slices.SortStableFunc(out, func(a, b pod) int { return less(a.labels, b.labels) })
	return names(out)
}

func l(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func weightTerm(w int32, k, v string) appspub.UpdatePriorityWeightTerm {
	return appspub.UpdatePriorityWeightTerm{Weight: w, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{k: v}}}
}

func TestPriority(t *testing.T) {
	order := func(keys ...string) *appspub.UpdatePriorityStrategy {
		s := &appspub.UpdatePriorityStrategy{}
		for _, k := range keys {
			s.OrderPriority = append(s.OrderPriority, appspub.UpdatePriorityOrderTerm{OrderedKey: k})
		}
		return s
	}
	weights := func(ts ...appspub.UpdatePriorityWeightTerm) *appspub.UpdatePriorityStrategy {
		return &appspub.UpdatePriorityStrategy{WeightPriority: ts}
	}
	for _, tc := range []struct {
		rule string // the OpenKruise v1.9.0 rule (pkg/util/updatesort/priority_sort.go)
		s    *appspub.UpdatePriorityStrategy
		pods []pod
		want string
	}{
		{"weightPriority: the sum of the matching terms' weights, higher first",
			weights(weightTerm(50, "a", "1"), weightTerm(30, "b", "1")),
			[]pod{{"none", nil}, {"a", l("a", "1")}, {"ab", l("a", "1", "b", "1")}, {"b", l("b", "1")}}, "ab a b none"},
		{"weightPriority: equal sums keep their previous order (stable sort, openkruise/kruise#2107)",
			weights(weightTerm(10, "a", "1")),
			[]pod{{"p3", nil}, {"p1", l("a", "1")}, {"p2", nil}, {"p0", l("a", "1")}}, "p1 p0 p3 p2"},
		{"weightPriority: no pod matching keeps the previous order (openkruise/kruise#2106)",
			weights(weightTerm(10, "never", "1")),
			[]pod{{"unready", nil}, {"ready", nil}}, "unready ready"},
		{"weightPriority: an empty selector matches every pod, changing nothing",
			weights(appspub.UpdatePriorityWeightTerm{Weight: 99}, weightTerm(1, "a", "1")),
			[]pod{{"x", nil}, {"a", l("a", "1")}}, "a x"},
		{"orderPriority: pods carrying none of the keys come first",
			order("k"),
			[]pod{{"k-1", l("k", "1")}, {"none", l("other", "5")}, {"k-3", l("k", "3")}}, "none k-3 k-1"},
		{"orderPriority: the first listed key a pod carries decides; an earlier key first",
			order("k1", "k2"),
			[]pod{{"k2-7", l("k2", "7")}, {"k1-5", l("k1", "5", "k2", "100")}, {"k1-2", l("k1", "2")}}, "k1-5 k1-2 k2-7"},
		{"orderPriority: the integer at the end of the value, higher first; no trailing digits count as 0",
			order("k"),
			[]pod{{"word", l("k", "abc")}, {"sts-10", l("k", "sts-10")}, {"5", l("k", "5")}, {"o-05", l("k", "o-05")}},
			"sts-10 5 o-05 word"},
		{"orderPriority: equal values keep their previous order",
			order("k"),
			[]pod{{"b", l("k", "x-1")}, {"a", l("k", "y-1")}, {"n2", nil}, {"n1", nil}}, "n2 n1 b a"},
		{"both set (the webhook forbids it): weightPriority decides",
			&appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{weightTerm(1, "w", "1")},
				OrderPriority: []appspub.UpdatePriorityOrderTerm{{OrderedKey: "k"}}},
			[]pod{{"k", l("k", "9")}, {"w", l("w", "1")}}, "w k"},
	} {
		if got := sortBy(tc.pods, tc.s); got != tc.want {
			t.Errorf("%s: order %q, want %q", tc.rule, got, tc.want)
		}
	}
	if Priority(nil) != nil || Priority(&appspub.UpdatePriorityStrategy{}) != nil {
		t.Error("an empty strategy orders pods")
	}
}

// The integer OpenKruise reads from an orderPriority value: the digits at its end, base 10; 0
// without digits or when they overflow int64.
func TestTrailingInt(t *testing.T) {
	for in, want := range map[string]int64{"10": 10, "sts-10": 10, "o-05": 5, "-5": 5, "5a": 0, "": 0,
		"v1.2.3": 3, "99999999999999999999": 0, "x9223372036854775807": 9223372036854775807} {
		if got := trailingInt(in); got != want {
			t.Errorf("trailingInt(%q) = %d, want %d", in, got, want)
		}
	}
}

// mk builds pods named by their index (0-9, then a-z) from a spec: 'x' is labelled zone=a, 'r'
// rack=1, 'b' both, '.' neither.
func mk(spec string) []pod {
	const ids = "0123456789abcdefghijklmnopqrstuvwxyz"
	var out []pod
	for i, c := range spec {
		p := pod{name: string(ids[i]), labels: map[string]string{}}
		switch c {
		case 'x':
			p.labels["zone"] = "a"
		case 'r':
			p.labels["rack"] = "1"
		case 'b':
			p.labels["zone"], p.labels["rack"] = "a", "1"
		}
		out = append(out, p)
	}
	return out
}

func TestScatter(t *testing.T) {
	zoneA := []Term{{Key: "zone", Value: "a"}}
	for _, tc := range []struct {
		rule         string // the OpenKruise v1.9.0 rule (pkg/util/updatesort/scatter_sort.go)
		items, other string // the pods waiting for an update, in order; the workload's other pods
		terms        []Term
		want         string // names, '' separated
	}{
		{"the user manual's example: 3 matching pods of 10 are updated 1st, 6th and 10th",
			"xxx.......", "", zoneA, "0345617892"},
		{"the last matching pod goes last, the others lead rounds of one matching and round(u/m) other pods",
			"..xx", "", zoneA, "2013"},
		{"rounds follow the pods' own counts when the workload is no denser: 1 matching and 1 other each",
			".x.x.x.x", "", zoneA, "10325467"},
		{"sparser elsewhere in the workload: the waiting pods' own counts still decide",
			"xxxx....", "........", zoneA, "04152673"},
		{"denser in the workload: rounds of the workload's sizes, and the other pods left over lead",
			"xx....", "xxxx", zoneA, "234051"},
		{"mid-rollout: the updated matching pod counts in the density",
			"...xx", "x", zoneA, "03124"},
		{"fewer than two matching pods: unchanged", "x...", "", zoneA, "0123"},
		{"fewer than two other pods: unchanged", "xxxxx.", "", zoneA, "012345"},
		{"all matching: unchanged", "xxxx", "", zoneA, "0123"},
		{"several terms: the term more waiting pods match goes first (rack=1, 3 pods), then zone=a",
			"xxrrr...", "", []Term{{Key: "zone", Value: "a"}, {Key: "rack", Value: "1"}}, "02536741"},
		{"several terms: the term more waiting pods match goes first (zone=a, 3 pods), then rack=1",
			"xxxrr...", "", []Term{{Key: "rack", Value: "1"}, {Key: "zone", Value: "a"}}, "30516724"},
		{"a single term with an empty value matches the pods without the key",
			"xx..xx", "", []Term{{Key: "zone", Value: ""}}, "201453"},
	} {
		items := mk(tc.items)
		var population []map[string]string
		for _, p := range mk(tc.items + tc.other) {
			population = append(population, p.labels)
		}
		got := Scatter(items, population, tc.terms, func(p pod) map[string]string { return p.labels })
		if n := strings.ReplaceAll(names(got), " ", ""); n != tc.want {
			t.Errorf("%s: Scatter(%s | %s) = %s, want %s", tc.rule, tc.items, tc.other, n, tc.want)
		}
		if n := strings.ReplaceAll(names(items), " ", ""); n != strings.ReplaceAll(names(mk(tc.items)), " ", "") {
			t.Errorf("%s: Scatter modified its input", tc.rule)
		}
	}
}
