package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
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

// restart --recreate restarts a CloneSet as OpenKruise's kubectl-kruise does: env RESTARTED_AT in
// every container, a change the controller cannot make in place, so it recreates the pods. Run
// again, the variable is replaced; an InPlaceOnly CloneSet is refused.
func TestRestartRecreate(t *testing.T) {
	f := fixtures(t)[1] // clone/web
	cs := f.obj.(*appsv1alpha1.CloneSet)
	cs.Spec.Template.Spec.Containers = append(cs.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "proxy:v1",
		Env: []corev1.EnvVar{{Name: "A", Value: "1"}}})
	cs.Spec.UpdateStrategy = appsv1alpha1.CloneSetUpdateStrategy{Type: appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType,
		Paused: true, Partition: ptr.To(intstr.FromInt32(1))}
	before := cs.Spec.Template.DeepCopy()
	env, c, _ := fakeEnv(t, f.objs...)
	get := func() *appsv1alpha1.CloneSet {
		t.Helper()
		cur := &appsv1alpha1.CloneSet{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(cs), cur); err != nil {
			t.Fatal(err)
		}
		return cur
	}
	for range 2 {
		out, err := kubectlKruise(env, "rollout", "restart", "clone/web", "--recreate")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, want := range []string{"cloneset.apps.kruise.io/web restarted: env RESTARTED_AT=", "paused", "partition 1",
			"the controller recreates the pods"} {
			if !strings.Contains(out, want) {
				t.Errorf("restart --recreate lacks %q:\n%s", want, out)
			}
		}
		tpl := get().Spec.Template
		for _, ct := range tpl.Spec.Containers {
			var values []string
			for _, e := range ct.Env {
				if e.Name == RestartedAtEnv {
					values = append(values, e.Value)
				}
			}
			if at, err := time.Parse(time.RFC3339, strings.Join(values, ",")); err != nil || time.Since(at) > time.Minute {
				t.Errorf("container %s: %s %v (%v), want one recent time", ct.Name, RestartedAtEnv, values, err)
			}
		}
		if d := inplace.Plan(before, &tpl, "web-new", inplace.Options{EnvFromMetadata: true}); d.InPlace() {
			t.Errorf("the controller would update the pods in place: %+v", d.Spec)
		}
	}
	if env := get().Spec.Template.Spec.Containers[1].Env; env[0].Name != "A" {
		t.Errorf("the sidecar's own env was lost: %v", env)
	}

	cur := get()
	cur.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
	if err := c.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	if _, err := kubectlKruise(env, "rollout", "restart", "clone/web", "--recreate"); err == nil || !strings.Contains(err.Error(), "InPlaceOnly") {
		t.Errorf("restart --recreate of an InPlaceOnly CloneSet: %v", err)
	}
}

// restart --help says what a CloneSet's restart does by default and with --recreate.
func TestRestartHelp(t *testing.T) {
	env, _, _ := fakeEnv(t)
	out, err := kubectlKruise(env, "rollout", "restart", "--help")
	for _, want := range []string{"restart in place by default", "ContainerRecreateRequest", "--recreate", "RESTARTED_AT",
		"cannot be made in place", "kubectl.kubernetes.io/restartedAt"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("restart --help lacks %q (%v):\n%s", want, err, out)
		}
	}
}
