package e2enode

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// cloneSetInPlace: a 3-pod CloneSet on the real node rolls app:v1 → app:v2 in place; every pod
// keeps its UID, restarts its container once, and the container then reports v2 from its files.
func cloneSetInPlace(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	const replicas = 3
	pod := realPod("app", sb.Image("app:v1")).Spec
	clone := harness.NewCloneSet(ns, "web", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, pod)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "web", "3 pods ready on v1", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ReadyReplicas == replicas && cs.Status.UpdatedReadyReplicas == replicas
	})
	before := listPods(t, cs, ns)
	for _, p := range before {
		if got := execIn(t, sb, ns, p.Name, "cat", "/etc/app-version"); got != "v1" {
			t.Fatalf("pod %s says %q before the rollout, want v1", p.Name, got)
		}
	}

	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, sb.Image("app:v2"))
	if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "web", "rolled out to v2", harness.RolledOut(replicas))
	t.Logf("%d pods on the real node updated in place in %.1fs", replicas, time.Since(t0).Seconds())
	after := listPods(t, cs, ns)
	harness.CheckUpdatedInPlace(t, before, after, replicas)
	for name := range after {
		if got := execIn(t, sb, ns, name, "cat", "/etc/app-version"); got != "v2" {
			t.Errorf("pod %s says %q after the rollout, want v2", name, got)
		}
	}
}

func listPods(t *testing.T, cs kubernetes.Interface, ns string) map[string]*corev1.Pod {
	t.Helper()
	list, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out
}
