package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"
)

// A restart its pod's budget refuses (429) is asked again until the budget lets it through, and
// said once; any other refusal ends the restart.
func TestCreateRestartWaitsForTheBudget(t *testing.T) {
	defer func(d time.Duration) { budgetRetry = d }(budgetRetry)
	budgetRetry = time.Millisecond
	scheme, err := kruisescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	refusals := 2
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if refusals > 0 {
				refusals--
				return apierrors.NewTooManyRequests("restart of pod ns/web-0 refused: PodUnavailableBudget web allows no more unavailable pods; retry later", 0)
			}
			return c.Create(ctx, obj, opts...)
		}}).Build()
	crr := &appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0-restart"},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: "web-0"}}
	var out bytes.Buffer
	if err := createRestart(context.Background(), c, crr, &out); err != nil {
		t.Fatal(err)
	}
	if refusals != 0 || strings.Count(out.String(), "waits for its PodUnavailableBudget") != 1 {
		t.Errorf("refusals left %d, output %q", refusals, out.String())
	}
	// Already there: not a budget's refusal, so not retried.
	again := crr.DeepCopy()
	again.ResourceVersion = ""
	if err := createRestart(context.Background(), c, again, &out); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: %v", err)
	}
}
