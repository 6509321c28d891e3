package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

// The order of a rollout follows updateStrategy.priorityStrategy (weightPriority, then
// orderPriority) and scatterStrategy, observed pod by pod with maxUnavailable 1.
func TestCloneSetUpdateOrder(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas = 6
	clone := newCloneSet(ns, "order", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "order", "all ready", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.ReadyReplicas == replicas })
	var names []string
	for name := range podsByName(t, ns, "app=order") {
		names = append(names, name)
	}
	sort.Strings(names)
	label := func(pod string, labels string) {
		t.Helper()
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, pod, types.MergePatchType, []byte(`{"metadata":{"labels":`+labels+`}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// rollout applies patch and returns the pods in the order their image changed to img.
	rollout := func(patch, img string) []string {
		t.Helper()
		patchCloneSet(t, c, clone, patch)
		seen := map[string]time.Time{}
		harness.Eventually(t, 2*time.Minute, "every pod on "+img, func() (bool, string) {
			now := time.Now()
			for name, p := range podsByName(t, ns, "app=order") {
				if _, ok := seen[name]; !ok && p.Spec.Containers[0].Image == img {
					seen[name] = now
				}
			}
			return len(seen) == replicas, fmt.Sprint(seen)
		})
		waitCloneSet(t, c, ns, "order", "rolled out", harness.RolledOut(replicas))
		order := slices.Clone(names)
		sort.SliceStable(order, func(i, j int) bool { return seen[order[i]].Before(seen[order[j]]) })
		return order
	}

	label(names[4], `{"prio":"high"}`)
	label(names[1], `{"prio":"high"}`)
	got := rollout(`{"spec":{"updateStrategy":{"priorityStrategy":{"weightPriority":[{"weight":100,"matchSelector":{"matchLabels":{"prio":"high"}}}]}},
		"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`, "registry.example/app:v2")
	// The two pods weigh the same: either may go first.
	if first := slices.Sorted(slices.Values(got[:2])); !slices.Equal(first, []string{names[1], names[4]}) {
		t.Errorf("weightPriority: order %v; want the two prio=high pods %v first", got, []string{names[1], names[4]})
	}

	for i, name := range names {
		label(name, fmt.Sprintf(`{"ord":"pod-%d"}`, i))
	}
	got = rollout(`{"spec":{"updateStrategy":{"priorityStrategy":{"weightPriority":null,"orderPriority":[{"orderedKey":"ord"}]}},
		"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v3"}]}}}}`, "registry.example/app:v3")
	want := slices.Clone(names)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Errorf("orderPriority: order %v; want the highest ord first %v", got, want)
	}

	for _, name := range names[:3] {
		label(name, `{"zone":"a"}`)
	}
	got = rollout(`{"spec":{"updateStrategy":{"priorityStrategy":null,"scatterStrategy":[{"key":"zone","value":"a"}]},
		"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v4"}]}}}}`, "registry.example/app:v4")
	// The exact order is OpenKruise's scatter, recomputed at every step over the pods still waiting
	// (unit-tested in pkg/core/updateorder against OpenKruise's own sorting); here: the zone=a pods are
	// not updated all in a row.
	var at []int
	for i, name := range got {
		if slices.Contains(names[:3], name) {
			at = append(at, i)
		}
	}
	if len(at) != 3 || at[2]-at[0] == 2 {
		t.Errorf("scatterStrategy: order %v; zone=a pods %v at %v, want them spread out", got, names[:3], at)
	}
}
