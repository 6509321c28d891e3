package e2enode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/node/restarter"
	"github.com/kruise-ng/kruise/test/harness"
)

// envFromMetadataInPlace: with InPlaceUpdateEnvFromMetadata (on in the sandbox with kruise-daemon),
// changing a template annotation that a container reads into its env restarts that container in
// place — through a ContainerRecreateRequest kruise-daemon carries out — and the restarted
// container sees the new value; the pod's other container does not restart.
func envFromMetadataInPlace(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	const replicas = 2
	spec := realPod("app", sb.Image("app:v1")).Spec
	spec.Containers[0].Env = []corev1.EnvVar{{Name: "APP_CONFIG", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['app-config']"}}}}
	side := spec.Containers[0]
	side.Name, side.Env = "side", nil
	spec.Containers = append(spec.Containers, side)
	clone := harness.NewCloneSet(ns, "env", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, spec)
	clone.Spec.Template.Annotations = map[string]string{"app-config": "one"}
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "env", "2 pods ready", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ReadyReplicas == replicas && cs.Status.UpdatedReadyReplicas == replicas
	})
	before := listPods(t, cs, ns)
	patch := `{"spec":{"template":{"metadata":{"annotations":{"app-config":"two"}}}}}`
	if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "env", "rolled out to the new annotation", harness.RolledOut(replicas))
	t.Logf("%d pods restarted their app container for the new annotation in %.1fs", replicas, time.Since(t0).Seconds())
	after := listPods(t, cs, ns)
	for name, p := range after {
		b, ok := before[name]
		if !ok || b.UID != p.UID {
			t.Errorf("pod %s was replaced", name)
			continue
		}
		for _, st := range p.Status.ContainerStatuses {
			switch {
			case st.Name == "side" && st.RestartCount != 0:
				t.Errorf("pod %s: the sidecar restarted %d times", name, st.RestartCount)
			case st.Name == "app" && st.RestartCount > 1:
				// kruise-daemon restarts it again when the kubelet started it before seeing the new
				// annotation (the env check below holds either way).
				t.Logf("pod %s: app restarted %d times (the kubelet lagged behind the annotation)", name, st.RestartCount)
			case st.Name == "app" && st.RestartCount < 1:
				t.Errorf("pod %s: app did not restart", name)
			}
		}
		if got := execIn(t, sb, ns, name, "env"); !strings.Contains(got, "APP_CONFIG=two") {
			t.Errorf("pod %s env lacks APP_CONFIG=two:\n%s", name, got)
		}
		crr := &appsv1alpha1.ContainerRecreateRequest{}
		key := client.ObjectKey{Namespace: ns, Name: engine.RecreateName(p, p.Labels["controller-revision-hash"])}
		if err := c.Get(ctx, key, crr); err != nil {
			t.Errorf("the request for pod %s: %v", name, err)
		} else if s := crr.Status.ContainerRecreateStates; crr.Status.Phase != appsv1alpha1.ContainerRecreateRequestCompleted ||
			len(s) != 1 || s[0].Message != restarter.EnvCheckedMessage {
			t.Errorf("the request for pod %s is %s: %s; want Completed with the env checked", name, crr.Status.Phase, fmt.Sprint(s))
		}
	}
}
