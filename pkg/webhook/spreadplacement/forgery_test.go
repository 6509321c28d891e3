package spreadplacement

import (
	"context"
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
)

// Deletions and evictions the API server would not have sent — of a pod that does not exist, of
// one under another UID, of one whose oldObject claims a placement the live pod does not carry —
// record no release; the genuine deletion does.
func TestForgedReleasesRecordNothing(t *testing.T) {
	ws := spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web")
	ws.Status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{
		spreadrules.VersionIgnored: {{Name: "a", Replicas: 2}, {Name: "b", MissingReplicas: -1}}}
	hs := newHarness(t, 0, webCloneSet(), ws)
	placed := hs.store(t, placedPod("web-1", "a"))
	unplaced := hs.store(t, podOf("web-2", "apps.kruise.io/v1alpha1", "CloneSet", "web"))

	otherUID := placed.DeepCopy()
	otherUID.UID = "forged"
	claimed := placedPod("web-2", "a")
	claimed.UID = unplaced.UID
	ev, _ := json.Marshal(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1"},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("forged"))}}})
	eviction := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, SubResource: "eviction",
		Namespace: "ns", Name: "web-1", Object: runtime.RawExtension{Raw: ev}}}

	for name, req := range map[string]admission.Request{
		"deletion of a pod that does not exist":    deletionOf(placedPod("ghost", "a")),
		"deletion under another UID":               deletionOf(otherUID),
		"deletion claiming a placement":            deletionOf(claimed),
		"eviction with another UID's precondition": eviction,
	} {
		before := hs.spread(t).ResourceVersion
		if resp := hs.h.handle(context.Background(), req, "ns/spread"); !resp.Allowed {
			t.Errorf("%s: refused %v", name, resp.Result)
		}
		if got := hs.spread(t); got.ResourceVersion != before {
			t.Errorf("%s: the spread's status was written: %+v", name, got.Status.VersionedSubsetStatuses)
		}
	}
	if resp := hs.h.handle(context.Background(), deletionOf(placed), "ns/spread"); !resp.Allowed {
		t.Fatalf("genuine deletion refused: %v", resp.Result)
	}
	if st := hs.spread(t).Status.VersionedSubsetStatuses[spreadrules.VersionIgnored][0]; st.DeletingPods["web-1"].Time.IsZero() {
		t.Errorf("genuine deletion not recorded: %+v", st)
	}
}
