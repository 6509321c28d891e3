package e2enode

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// daemonSetInPlace: an InPlaceIfPossible Advanced DaemonSet limited to the real node runs one pod
// there and rolls app:v1 → app:v2 in place: the same pod UID, its container restarted once, the
// container then reporting v2 from its files.
func daemonSetInPlace(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	labels := map[string]string{"app": "agent"}
	ds := &appsv1beta1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"},
		Spec: appsv1beta1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: realPod("app", sb.Image("app:v1")).Spec},
			UpdateStrategy: appsv1beta1.DaemonSetUpdateStrategy{Type: appsv1beta1.DaemonSetRollingUpdateStrategyType,
				RollingUpdate: &appsv1beta1.DaemonSetRollingUpdate{Type: appsv1beta1.DaemonSetInplaceRollingUpdateType,
					MaxUnavailable: ptr.To(intstr.FromInt32(1))}}}}
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	waitDaemonSet := func(what string, cond func(*appsv1beta1.DaemonSetStatus) bool) {
		t.Helper()
		harness.Eventually(t, 2*time.Minute, what, func() (bool, string) {
			got := &appsv1beta1.DaemonSet{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(ds), got); err != nil {
				return false, err.Error()
			}
			return got.Status.ObservedGeneration == got.Generation && cond(&got.Status), fmt.Sprintf("%+v", got.Status)
		})
	}
	waitDaemonSet("one pod on the real node, available", func(s *appsv1beta1.DaemonSetStatus) bool {
		return s.DesiredNumberScheduled == 1 && s.NumberAvailable == 1 && s.UpdatedNumberScheduled == 1
	})
	before := listPods(t, cs, ns)
	if len(before) != 1 {
		t.Fatalf("%d pods, want one on the real node", len(before))
	}
	for name, p := range before {
		if p.Spec.NodeName != sandbox.RealNodeName {
			t.Fatalf("pod %s on node %q, want %s", name, p.Spec.NodeName, sandbox.RealNodeName)
		}
		if got := execIn(t, sb, ns, name, "cat", "/etc/app-version"); got != "v1" {
			t.Fatalf("pod %s says %q before the rollout, want v1", name, got)
		}
	}
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, sb.Image("app:v2"))
	if err := c.Patch(ctx, ds, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	waitDaemonSet("rolled out to v2", func(s *appsv1beta1.DaemonSetStatus) bool {
		return s.DesiredNumberScheduled == 1 && s.NumberAvailable == 1 && s.UpdatedNumberScheduled == 1 && s.UpdateRevision != ""
	})
	harness.Eventually(t, time.Minute, "the pod on v2, in place", func() (bool, string) {
		after := listPods(t, cs, ns)
		for name, p := range after {
			b, ok := before[name]
			if !ok || len(p.Status.ContainerStatuses) != 1 {
				return false, "pod " + name + " is not the one created for v1"
			}
			st := p.Status.ContainerStatuses[0]
			done := p.UID == b.UID && st.RestartCount == 1 && st.Ready && p.Spec.Containers[0].Image == sb.Image("app:v2") &&
				harness.PodCondition(p, appspub.InPlaceUpdateReady) == corev1.ConditionTrue
			return done && len(after) == 1, fmt.Sprintf("%s restarts %d ready %v", name, st.RestartCount, st.Ready)
		}
		return false, "no pod"
	})
	t.Logf("the daemon pod on the real node updated in place in %.1fs", time.Since(t0).Seconds())
	for name := range before {
		if got := execIn(t, sb, ns, name, "cat", "/etc/app-version"); got != "v2" {
			t.Errorf("pod %s says %q after the rollout, want v2", name, got)
		}
	}
}
