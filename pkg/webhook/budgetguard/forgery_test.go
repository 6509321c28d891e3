package budgetguard

import (
	"context"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
)

func budgetVersion(t *testing.T, c client.Client) string {
	t.Helper()
	pub := &policyv1alpha1.PodUnavailableBudget{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}, pub); err != nil {
		t.Fatal(err)
	}
	return pub.ResourceVersion
}

// Requests whose oldObject the API server would not have sent — a pod that does not exist, one
// under another UID or none, labels the live pod does not carry — are allowed and change nothing:
// the budget is decided from the live pod. The genuine deletion is then counted.
func TestHandlerForgedRequestsChangeNothing(t *testing.T) {
	a := guardedPod("a")
	other := guardedPod("other")
	other.Labels = map[string]string{"app": "api"}
	cl := cluster(t, nil, webBudget(1), a, other)
	h, _ := handler(t, cl)

	withUID := func(p *corev1.Pod, uid types.UID) *corev1.Pod {
		p = p.DeepCopy()
		p.UID = uid
		return p
	}
	otherAsWeb := other.DeepCopy()
	otherAsWeb.Labels = map[string]string{"app": "web"}
	newImage := withUID(a, "forged")
	newImage.Spec.Containers[0].Image = "app:v2"
	resize := update(t, withUID(a, "forged"), withUID(a, "forged"))
	resize.SubResource = "resize"
	evict := eviction(t, a)
	evict.Object = raw(t, &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
		ObjectMeta:    metav1.ObjectMeta{Namespace: "ns", Name: "a"},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("forged"))}}})

	for name, req := range map[string]admissionv1.AdmissionRequest{
		"delete of a pod that does not exist":                deletion(t, guardedPod("ghost"), false),
		"delete under another UID":                           deletion(t, withUID(a, "forged"), false),
		"delete without UID":                                 deletion(t, withUID(a, ""), false),
		"delete of an unguarded pod relabelled in oldObject": deletion(t, otherAsWeb, false),
		"update under another UID":                           update(t, withUID(a, "forged"), newImage),
		"resize under another UID":                           resize,
		"eviction with another UID's precondition":           evict,
	} {
		before := budgetVersion(t, cl)
		if resp := serve(t, h, budgetPath, req); !resp.Allowed {
			t.Errorf("%s: refused %+v", name, resp.Result)
		}
		if after := budgetVersion(t, cl); after != before {
			t.Errorf("%s: the budget was written (resourceVersion %s → %s): %+v", name, before, after, status(t, cl))
		}
	}
	before := budgetVersion(t, cl)
	if resp := serve(t, h, budgetPath, deletion(t, a, false)); !resp.Allowed {
		t.Fatalf("genuine deletion refused: %+v", resp.Result)
	}
	if st := status(t, cl); budgetVersion(t, cl) == before || len(st.DisruptedPods) != 1 {
		t.Errorf("genuine deletion not counted: %+v", st)
	}
}

// A pod the cache does not hold yet (or holds under another UID) is read from the API server:
// under a budget allowing no more disruption, its deletion is refused, where a pod found nowhere
// would be allowed.
func TestHandlerPodReadFromTheAPIServer(t *testing.T) {
	a := guardedPod("a")
	cl := cluster(t, nil, webBudget(0), a)
	stale := guardedPod("a")
	stale.UID = "uid-of-an-earlier-pod"
	for name, cache := range map[string]client.Client{
		"not in the cache":        fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(webBudget(0)).Build(),
		"cache holds another UID": fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(webBudget(0), stale).Build(),
	} {
		h, _ := handler(t, cl)
		h.Reader = cache
		if resp := serve(t, h, budgetPath, deletion(t, a, false)); resp.Allowed {
			t.Errorf("%s: the API server's pod was not found (deletion allowed past a budget allowing none)", name)
		}
	}
}
