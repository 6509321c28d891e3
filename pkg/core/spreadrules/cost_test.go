package spreadrules

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/kruise-ng/kruise/pkg/core/updateorder"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// ready is a running, ready pod created at t0+age seconds (larger: newer).
func ready(name string, age int) Pod {
	created := t0.Add(time.Duration(age) * time.Second)
	return Pod{Name: name, Active: true, Rank: updateorder.Rank{Scheduled: true, Phase: corev1.PodRunning,
		Ready: true, ReadySince: created, Created: created}}
}

func pending(name string) Pod { return Pod{Name: name, Active: true} }

func inactive(name string) Pod { return Pod{Name: name} }

// podsNamed makes count ready pods name-a, name-b, ..., all alike.
func podsNamed(name string, count int) []Pod {
	out := make([]Pod, count)
	for i := range out {
		out[i] = ready(name+"-"+string(rune('a'+i)), 0)
	}
	return out
}

func TestDeletionCosts(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   CostInput
		want map[string]string
	}{{
		// OpenKruise's own example: quotas 10, 10 and unlimited, 10 pods each: 300, 200, 100, so
		// a scale-in empties c, then b, then a.
		name: "within quota: later subsets cheaper",
		in: CostInput{Subsets: []CostSubset{
			{Name: "a", MaxReplicas: num(10), Pods: podsNamed("a", 2)},
			{Name: "b", MaxReplicas: num(10), Pods: podsNamed("b", 2)},
			{Name: "c", Pods: podsNamed("c", 2)},
		}},
		want: map[string]string{"a-a": "300", "a-b": "300", "b-a": "200", "b-b": "200", "c-a": "100", "c-b": "100"},
	}, {
		// Over quota, the extra pods go negative, -100*(i+1): the first subset's extras -100, the
		// second's -200, below every pod within a quota.
		name: "over quota: extras negative by subset index",
		in: CostInput{Subsets: []CostSubset{
			{Name: "a", MaxReplicas: num(1), Pods: []Pod{ready("a-old", 0), ready("a-new", 10)}},
			{Name: "b", MaxReplicas: num(1), Pods: []Pod{ready("b-old", 0), ready("b-new", 10)}},
			{Name: "c", Pods: podsNamed("c", 3)},
		}},
		// Among ready pods, the newest is most deletable (ActivePods order).
		want: map[string]string{"a-old": "300", "a-new": "-100", "b-old": "200", "b-new": "-200",
			"c-a": "100", "c-b": "100", "c-c": "100"},
	}, {
		name: "over quota: pending pods are the extras before ready ones",
		in: CostInput{Subsets: []CostSubset{
			{Name: "a", MaxReplicas: num(2), Pods: []Pod{ready("r1", 5), pending("p1"), ready("r2", 0), pending("p2")}},
		}},
		want: map[string]string{"r1": "100", "r2": "100", "p1": "-100", "p2": "-100"},
	}, {
		// Equal ranks: the sort is stable, so the first in input order become the extras.
		name: "ties keep input order",
		in: CostInput{Subsets: []CostSubset{
			{Name: "a", MaxReplicas: num(1), Pods: []Pod{ready("x", 0), ready("y", 0), ready("z", 0)}},
		}},
		want: map[string]string{"x": "-100", "y": "-100", "z": "100"},
	}, {
		// Inactive pods neither get a cost nor count against the quota.
		name: "inactive pods ignored",
		in: CostInput{Subsets: []CostSubset{
			{Name: "a", MaxReplicas: num(1), Pods: []Pod{inactive("gone"), ready("x", 0)}},
		}},
		want: map[string]string{"x": "100"},
	}, {
		// Percent quotas round up: 30% of 5 is 2.
		name: "percent quota of workload replicas, rounded up",
		in: CostInput{WorkloadReplicas: 5, Subsets: []CostSubset{
			{Name: "a", MaxReplicas: pct("30%"), Pods: []Pod{ready("x", 0), ready("y", 1), ready("z", 2)}},
			{Name: "b"},
		}},
		want: map[string]string{"x": "200", "y": "200", "z": "-100"},
	}, {
		// Pods matching no subset get the lowest cost, -100*(n+1).
		name: "pods in no subset are deleted first",
		in: CostInput{
			Subsets:   []CostSubset{{Name: "a", Pods: podsNamed("a", 1)}, {Name: "b", Pods: podsNamed("b", 1)}},
			Unmatched: []Pod{ready("stray", 0), inactive("dead")},
		},
		want: map[string]string{"a-a": "200", "b-a": "100", "stray": "-300"},
	}, {
		// A revision other than the latest counts subsets from the back: its first subset is
		// emptied first during a rollout, keeping the spread of old plus new.
		name: "old revision: reverse order",
		in: CostInput{OldRevision: true, Subsets: []CostSubset{
			{Name: "a", MaxReplicas: num(1), Pods: []Pod{ready("a-old", 0), ready("a-new", 10)}},
			{Name: "b", Pods: podsNamed("b", 1)},
		}, Unmatched: []Pod{ready("stray", 0)}},
		want: map[string]string{"a-old": "100", "a-new": "-200", "b-a": "200", "stray": "-300"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DeletionCosts(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(tc.want, got) {
				t.Errorf("(-want +got):\n%s", diff.Diff(tc.want, got))
			}
		})
	}
}

func TestDeletionCostsSkipsMalformedQuota(t *testing.T) {
	got, err := DeletionCosts(CostInput{Subsets: []CostSubset{
		{Name: "bad", MaxReplicas: pct("ten"), Pods: podsNamed("bad", 1)},
		{Name: "ok", Pods: podsNamed("ok", 1)},
	}})
	if err == nil || !strings.Contains(err.Error(), "subset bad") {
		t.Errorf("error %v; want one naming subset bad", err)
	}
	if want := map[string]string{"ok-a": "100"}; !equality.Semantic.DeepEqual(want, got) {
		t.Errorf("(-want +got):\n%s", diff.Diff(want, got))
	}
}

// TestDeletionCostsOrder checks the invariant a user notices: every pod beyond a quota or in no
// subset is cheaper than every pod within a quota, and within quotas later subsets are cheaper.
func TestDeletionCostsOrder(t *testing.T) {
	in := CostInput{Subsets: []CostSubset{
		{Name: "a", MaxReplicas: num(1), Pods: podsNamed("a", 3)},
		{Name: "b", MaxReplicas: num(2), Pods: podsNamed("b", 3)},
		{Name: "c", Pods: podsNamed("c", 3)},
	}, Unmatched: []Pod{ready("u", 0)}}
	costs, err := DeletionCosts(in)
	if err != nil {
		t.Fatal(err)
	}
	var negatives, positives int
	for _, v := range costs {
		if strings.HasPrefix(v, "-") {
			negatives++
		} else {
			positives++
		}
	}
	// a keeps 1, b keeps 2, c keeps 3 → 6 positive; a's 2 extras, b's 1 extra, u → 4 negative.
	if positives != 6 || negatives != 4 {
		t.Errorf("costs %v: %d positive, %d negative; want 6 and 4", costs, positives, negatives)
	}
}
