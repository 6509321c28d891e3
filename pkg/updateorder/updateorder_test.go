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

func sortBy(pods []pod, s *appspub.UpdatePriorityStrategy) string {
	less := Priority(s)
	out := slices.Clone(pods)
	slices.SortStableFunc(out, func(a, b pod) int { return less(a.labels, b.labels) })
	var names []string
	for _, p := range out {
		names = append(names, p.name)
	}
	return strings.Join(names, " ")
}

func TestWeightPriority(t *testing.T) {
	pods := []pod{{"none", nil}, {"a", map[string]string{"a": "1"}}, {"ab", map[string]string{"a": "1", "b": "1"}},
		{"b", map[string]string{"b": "1"}}}
	s := &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{
		{Weight: 50, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "1"}}},
		{Weight: 30, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"b": "1"}}},
		{Weight: 99, MatchSelector: metav1.LabelSelector{}}, // empty: matches nothing
	}}
	if got, want := sortBy(pods, s), "ab a b none"; got != want {
		t.Errorf("order %q, want %q (sum of matching weights, highest first)", got, want)
	}
}

func TestOrderPriority(t *testing.T) {
	pods := []pod{{"none", nil}, {"k2-7", map[string]string{"k2": "7"}}, {"k1-sts-10", map[string]string{"k1": "sts-10"}},
		{"k1-5", map[string]string{"k1": "5", "k2": "100"}}, {"k1-word", map[string]string{"k1": "abc"}}}
	s := &appspub.UpdatePriorityStrategy{OrderPriority: []appspub.UpdatePriorityOrderTerm{{OrderedKey: "k1"}, {OrderedKey: "k2"}}}
	if got, want := sortBy(pods, s), "k1-sts-10 k1-5 k1-word k2-7 none"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if Priority(nil) != nil || Priority(&appspub.UpdatePriorityStrategy{}) != nil {
		t.Error("an empty strategy orders pods")
	}
	for in, want := range map[string]int64{"10": 10, "sts-10": 10, "o-05": 5, "-5": 5, "5a": 0, "": 0, "99999999999999999999": 0} {
		if got := trailingInt(in); got != want {
			t.Errorf("trailingInt(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestScatter(t *testing.T) {
	mk := func(spec string) []pod { // "xx.x..": x labelled zone=a
		var out []pod
		for i, c := range spec {
			p := pod{name: string(rune('0' + i))}
			if c == 'x' {
				p.labels = map[string]string{"zone": "a"}
			}
			out = append(out, p)
		}
		return out
	}
	render := func(ps []pod) string {
		var b strings.Builder
		for _, p := range ps {
			if p.labels["zone"] == "a" {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	labelsOf := func(p pod) map[string]string { return p.labels }
	zoneA := []Term{{Key: "zone", Value: "a"}}
	for _, tc := range []struct{ in, want string }{
		{"xxx.......", "x....x...x"}, // the user manual's example: positions 1, 6, 10
		{"..xx", "x..x"},
		{"x...", "x..."},     // one match: unchanged
		{"xxxx", "xxxx"},     // all match: unchanged
		{"xxxxx.", "xx.xxx"}, // more matches than not
	} {
		if got := render(Scatter(mk(tc.in), zoneA, labelsOf)); got != tc.want {
			t.Errorf("Scatter(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	in := mk("xxx.......")
	got := Scatter(in, zoneA, labelsOf)
	var names []string
	for _, p := range got {
		names = append(names, p.name)
	}
	if strings.Join(names, "") != "0345617892" {
		t.Errorf("relative order not kept: %v", names)
	}
	if render(in) != "xxx......." {
		t.Error("Scatter modified its input")
	}
}
