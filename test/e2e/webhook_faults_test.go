package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/webhook/sidecarinjection"
	"github.com/kruise-ng/kruise/test/harness"
)

// The soak's webhook and cache faults, one at a time, on a sandbox of the test's own with
// kruise-manager behind its fronts: a pod a SidecarSet selects is refused while the webhooks are
// dropped, or slower than the injection entry's timeout (10 s), never created without its sidecar;
// it is created with its sidecar, late, while they are slow within the timeout, and while the
// manager's cache lags; and at once once healed.
func TestSidecarInjectionThroughImpairedFronts(t *testing.T) {
	ctx := context.Background()
	own, err := harness.StartSandbox(1, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := harness.Down(own); err != nil {
			t.Errorf("sandbox down: %v", err)
		}
	})
	frontCtx, stopFronts := context.WithCancel(ctx)
	t.Cleanup(stopFronts)
	fronts, err := own.FrontKruiseManager(frontCtx)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := own.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	c := harness.KruiseClient(t, cfg)
	ocs := kubernetes.NewForConfigOrDie(cfg)
	ns := harness.Namespace(t, ocs)
	guard := createSidecarSet(t, c, newSidecarSet("guard", ns, "guarded",
		corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}, appsv1beta1.SidecarSetBeforeAppContainer))
	entry := sidecarinjection.EntryName(guard.Name)
	conf := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: install.SidecarInjectionConfiguration}, conf); err != nil {
		t.Fatal(err)
	}
	for _, w := range conf.Webhooks {
		if w.Name == entry && (w.ClientConfig.URL == nil || !strings.Contains(*w.ClientConfig.URL, fmt.Sprintf(":%d/", fronts.Webhooks.Port()))) {
			t.Fatalf("entry %s calls %v, not the webhooks' front %s", entry, w.ClientConfig.URL, fronts.Webhooks.Addr)
		}
	}

	create := func(name string) (*corev1.Pod, time.Duration, error) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "guarded"}},
			Spec: podSpec("registry.example/app:v1")}
		start := time.Now()
		got, err := ocs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		return got, time.Since(start), err
	}
	refused := func(what, name string) {
		t.Helper()
		_, took, err := create(name)
		switch {
		case err == nil:
			t.Errorf("%s: pod %s was created, without its sidecar", what, name)
		case !strings.Contains(err.Error(), entry):
			t.Errorf("%s: pod %s refused with %q, which does not name entry %s", what, name, err, entry)
		default:
			t.Logf("%s: pod %s refused after %.1fs: %v", what, name, took.Seconds(), err)
		}
	}
	injected := func(what, name string, atLeast time.Duration) {
		t.Helper()
		got, took, err := create(name)
		if err != nil {
			t.Errorf("%s: pod %s refused: %v", what, name, err)
			return
		}
		if names := containerNames(got.Spec.Containers); !slices.Equal(names, []string{"agent", "app"}) {
			t.Errorf("%s: pod %s has containers %v, want [agent app]", what, name, names)
		}
		if took < atLeast {
			t.Errorf("%s: pod %s created after %s, want at least %s", what, name, took, atLeast)
		}
		t.Logf("%s: pod %s created with its sidecar after %.1fs", what, name, took.Seconds())
	}

	fronts.Webhooks.Impair(sandbox.FrontDrop, 0)
	refused("webhooks dropped", "dropped")
	fronts.Webhooks.Impair(sandbox.FrontSlow, 11*time.Second)
	refused("webhooks slower than the timeout", "too-slow")
	fronts.Webhooks.Impair(sandbox.FrontSlow, 2*time.Second)
	injected("webhooks slow", "slow", 2*time.Second)
	fronts.Webhooks.Heal()
	fronts.API.Impair(sandbox.FrontLag, 3*time.Second)
	injected("manager's cache lagging", "lagging", 0)
	fronts.API.Heal()
	injected("healed", "healed", 0)
}
