package validating

import (
	"context"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// restartBudget answers as told and records what it was asked.
type restartBudget struct {
	allow  bool
	asked  []string
	dryRun []bool
}

func (b *restartBudget) AdmitRestart(_ context.Context, pod *corev1.Pod, dryRun bool) (bool, string, error) {
	b.asked = append(b.asked, pod.Name)
	b.dryRun = append(b.dryRun, dryRun)
	if !b.allow {
		return false, "PodUnavailableBudget web allows no more unavailable pods", nil
	}
	return true, "", nil
}

// A ContainerRecreateRequest asks its pod's budget once the spec is valid: a refusal is 429 with
// the budget's reason and "retry later"; a dry run is passed on as one; a request whose pod was
// recreated after the mutating webhook read it (another UID) charges no budget and is refused.
func TestContainerRecreateRequestAsksTheBudget(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0", UID: "uid-1"}}
	pods := fake.NewClientBuilder().WithScheme(sidecarSetScheme(t)).WithObjects(pod).Build()
	crr := func(uid string) *v1alpha1.ContainerRecreateRequest {
		return &v1alpha1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "restart", Labels: map[string]string{v1alpha1.ContainerRecreateRequestPodUIDKey: uid}},
			Spec: v1alpha1.ContainerRecreateRequestSpec{PodName: "web-0",
				Containers: []v1alpha1.ContainerRecreateRequestContainer{{Name: "app"}}}}
	}
	ctxFor := func(dryRun bool) context.Context {
		return admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			Operation: admissionv1.Create, DryRun: ptr.To(dryRun)}})
	}

	refusing := &restartBudget{}
	v := crrValidator{Pods: pods, Budget: refusing}
	_, err := v.ValidateCreate(ctxFor(false), crr("uid-1"))
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "restart of pod ns/web-0 refused: PodUnavailableBudget web allows no more") ||
		!strings.Contains(err.Error(), "retry later") {
		t.Errorf("refused restart: %v; want 429 naming the budget", err)
	}

	allowing := &restartBudget{allow: true}
	v = crrValidator{Pods: pods, Budget: allowing}
	if _, err := v.ValidateCreate(ctxFor(true), crr("uid-1")); err != nil {
		t.Errorf("dry-run restart within the budget: %v", err)
	}
	if _, err := v.ValidateCreate(ctxFor(false), crr("uid-1")); err != nil {
		t.Errorf("restart within the budget: %v", err)
	}
	if len(allowing.dryRun) != 2 || !allowing.dryRun[0] || allowing.dryRun[1] {
		t.Errorf("dry runs passed on: %v", allowing.dryRun)
	}

	_, err = v.ValidateCreate(ctxFor(false), crr("uid-0"))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "the pod was recreated") {
		t.Errorf("request for a recreated pod: %v", err)
	}
	if len(allowing.asked) != 2 {
		t.Errorf("the budget was asked for a recreated pod: %v", allowing.asked)
	}

	// An invalid spec is refused before any budget is asked.
	bad := crr("uid-1")
	bad.Spec.Containers = nil
	if _, err := v.ValidateCreate(ctxFor(false), bad); !apierrors.IsInvalid(err) || len(allowing.asked) != 2 {
		t.Errorf("invalid request: %v (budget asked %d times)", err, len(allowing.asked))
	}
}
