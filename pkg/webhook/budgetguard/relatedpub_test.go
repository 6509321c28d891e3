package budgetguard

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
)

// A pod's kruise.io/related-pub annotation is honoured only when that budget selects the pod: a
// pod annotated with a generous budget that does not select it (or with one that does not exist)
// is still guarded by the budget that does, and the named budget is not charged.
func TestRelatedPubNamingAnotherBudgetIsIgnored(t *testing.T) {
	generous := webBudget(5)
	generous.Name = "generous"
	generous.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	for _, related := range []string{"generous", "no-such-budget"} {
		pod := guardedPod("a")
		pod.Annotations = map[string]string{policyv1alpha1.PodRelatedPubAnnotation: related}
		cl := cluster(t, nil, webBudget(0), generous, pod, guardedPod("b"))
		h, _ := handler(t, cl)
		resp := serve(t, h, PathPrefix+"ns", eviction(t, pod))
		if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusTooManyRequests ||
			!strings.Contains(resp.Result.Message, "PodUnavailableBudget web") {
			t.Errorf("related-pub %s: eviction allowed %v, %+v; want it refused by budget web", related, resp.Allowed, resp.Result)
		}
		resp = serve(t, h, PathPrefix+"ns", deletion(t, pod, false))
		if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusForbidden {
			t.Errorf("related-pub %s: deletion allowed %v, %+v; want it refused by budget web", related, resp.Allowed, resp.Result)
		}
		if related == "generous" {
			g := &policyv1alpha1.PodUnavailableBudget{}
			if err := cl.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "generous"}, g); err != nil || len(g.Status.DisruptedPods) != 0 {
				t.Errorf("the budget named by the annotation was charged: %+v %v", g.Status, err)
			}
		}
	}
	// The annotation naming the budget that does select the pod is honoured.
	pod := guardedPod("a")
	pod.Annotations = map[string]string{policyv1alpha1.PodRelatedPubAnnotation: "web"}
	cl := cluster(t, nil, webBudget(1), generous, pod, guardedPod("b"))
	h, _ := handler(t, cl)
	if resp := serve(t, h, PathPrefix+"ns", eviction(t, pod)); !resp.Allowed {
		t.Errorf("eviction under its own budget with room refused: %+v", resp.Result)
	}
	if st := status(t, cl); len(st.DisruptedPods) != 1 {
		t.Errorf("budget web did not record the eviction: %+v", st)
	}
}
