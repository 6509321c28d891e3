package budgetguard

import (
	"context"
	"strings"
	"testing"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
)

// A restart (a ContainerRecreateRequest) takes a unit of the budget as an in-place update does:
// recorded in unavailablePods, nothing recorded on a dry run, the next restart refused once
// nothing more is allowed, and a pod the budget recorded already (the in-place engine's own
// restart of a pod it updates) passes for free.
func TestAdmitRestart(t *testing.T) {
	ctx := context.Background()
	a, b := guardedPod("a"), guardedPod("b")
	cl := cluster(t, nil, webBudget(1), a, b)
	h, _ := handler(t, cl)

	if ok, reason, err := h.AdmitRestart(ctx, a, true); err != nil || !ok {
		t.Fatalf("dry-run restart: %v %q %v", ok, reason, err)
	}
	if st := status(t, cl); len(st.UnavailablePods) != 0 || st.UnavailableAllowed != 1 {
		t.Fatalf("a dry run recorded: %+v", st)
	}
	if ok, reason, err := h.AdmitRestart(ctx, a, false); err != nil || !ok {
		t.Fatalf("restart within the budget: %v %q %v", ok, reason, err)
	}
	if st := status(t, cl); !st.UnavailablePods["a"].Time.Equal(now) || len(st.DisruptedPods) != 0 || st.UnavailableAllowed != 0 {
		t.Fatalf("status after the restart: %+v", st)
	}
	ok, reason, err := h.AdmitRestart(ctx, b, false)
	if err != nil || ok || !strings.Contains(reason, "PodUnavailableBudget web allows no more unavailable pods") {
		t.Errorf("restart beyond the budget: %v %q %v", ok, reason, err)
	}
	if ok, reason, err := h.AdmitRestart(ctx, a, false); err != nil || !ok {
		t.Errorf("a second restart of the recorded pod: %v %q %v", ok, reason, err)
	}
	// PodUnavailableBudgetUpdateGate off: restarts are not guarded, as updates are not.
	h.Off = map[policyv1alpha1.PubOperation]bool{policyv1alpha1.PubUpdateOperation: true}
	if ok, reason, err := h.AdmitRestart(ctx, b, false); err != nil || !ok {
		t.Errorf("restart with updates unguarded: %v %q %v", ok, reason, err)
	}
}
