package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

// The chart's monitoring assets (charts/kruise/files: the PrometheusRule's rules, the Grafana
// dashboard) name only metrics kruise-manager serves: after an in-place rollout and a disruption a
// budget refuses, every metric in test/monitoring/names.txt (which that module checks to be exactly
// what the expressions name) is in a scrape of the manager.
func TestMonitoringNamesServedMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	raw, err := os.ReadFile("../monitoring/names.txt")
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Fields(string(raw))
	clone := newCloneSet(ns, "watched", 2, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "watched", "ready", func(cs *appsv1alpha1.CloneSet) bool { return cs.Status.ReadyReplicas == 2 })
	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	waitCloneSet(t, c, ns, "watched", "rolled out", harness.RolledOut(2))
	if err := c.Create(ctx, maxOneBudget(ns, "watched", "watched", 2)); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, c, ns, "watched", "allows one", func(p *policyv1alpha1.PodUnavailableBudget) bool { return p.Status.UnavailableAllowed == 1 })
	waitBudgetEntries(t, c, ns, "watched")
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=watched"})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("pods of the CloneSet: %v (%v)", len(pods.Items), err)
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, pods.Items[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("first deletion: %v", err)
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, pods.Items[1].Name, metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("second deletion: %v; want it refused by the budget", err)
	}
	harness.Eventually(t, 30*time.Second, "every metric the monitoring assets name is served", func() (bool, string) {
		fams := scrape(t)
		var missing []string
		for _, n := range names {
			if _, ok := fams[family(n)]; !ok {
				missing = append(missing, n)
			}
		}
		return len(missing) == 0, fmt.Sprintf("not served: %v", missing)
	})
	_ = c.Delete(ctx, &policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "watched"}})
	_ = c.Delete(ctx, clone, client.PropagationPolicy(metav1.DeletePropagationBackground))
}

// family is the metric family a series name belongs to: a histogram's _bucket, _sum and _count
// series are its family's.
func family(series string) string {
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if f, ok := strings.CutSuffix(series, s); ok {
			return f
		}
	}
	return series
}
