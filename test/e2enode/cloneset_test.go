package e2enode

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
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
	after := waitRolledInPlaceToV2(t, sb, cs, c, ns, "web", before, 90*time.Second)
	// kruise-daemon reports what containerd runs for each pod: the restarted container.
	for name := range after {
		harness.Eventually(t, 30*time.Second, "container meta of "+name, func() (bool, string) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			var meta appspub.RuntimeContainerMetaSet
			raw := p.Annotations[appspub.RuntimeContainerMetaKey]
			if err := json.Unmarshal([]byte(raw), &meta); err != nil || len(meta.Containers) != 1 {
				return false, raw
			}
			m, st := meta.Containers[0], p.Status.ContainerStatuses[0]
			return m.Name == "app" && m.ContainerID == st.ContainerID && m.RestartCount == st.RestartCount && m.Hashes.PlainHash != 0, raw
		})
	}

	// app:v2 → app:v2-retag, the same digest: the image ID does not change, the daemon's report of
	// the kubelet's spec hash shows the restart, and the rollout completes.
	patch = fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, sb.Image("app:v2-retag"))
	if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "web", "rolled out to the retag", harness.RolledOut(replicas))
	t.Logf("retag (same digest) rolled out in place in %.1fs", time.Since(t0).Seconds())
	for name, p := range listPods(t, cs, ns) {
		st := p.Status.ContainerStatuses[0]
		if b, ok := after[name]; !ok || b.UID != p.UID || st.RestartCount != 2 || st.ImageID != b.Status.ContainerStatuses[0].ImageID {
			t.Errorf("pod %s after the retag: restarts %d, image ID %s (was %v)", name, st.RestartCount, st.ImageID, ok)
		}
	}
}

// waitRolledInPlaceToV2 waits for the CloneSet name to roll out to app:v2 and checks that its pods
// are before's, updated in place, each container reporting v2; it returns the pods.
func waitRolledInPlaceToV2(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client, ns, name string,
	before map[string]*corev1.Pod, timeout time.Duration) map[string]*corev1.Pod {
	t.Helper()
	t0 := time.Now()
	harness.WaitCloneSet(t, c, timeout, ns, name, "rolled out to v2", harness.RolledOut(int32(len(before))))
	t.Logf("%d pods on the real node updated in place in %.1fs", len(before), time.Since(t0).Seconds())
	after := listPods(t, cs, ns)
	harness.CheckUpdatedInPlace(t, before, after, len(before))
	for name := range after {
		if got := execIn(t, sb, ns, name, "cat", "/etc/app-version"); got != "v2" {
			t.Errorf("pod %s says %q after the rollout, want v2", name, got)
		}
	}
	return after
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

// gracePeriodEndpoint: with inPlaceUpdateStrategy.gracePeriodSeconds 5, the pod behind a Service
// turns not ready in its EndpointSlice while its container still runs v1 (restartCount 0), and the
// container restarts only after the grace period.
func gracePeriodEndpoint(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	const grace = 5
	pod := realPod("app", sb.Image("app:v1")).Spec
	pod.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	clone := harness.NewCloneSet(ns, "graceful", 1, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, pod)
	clone.Spec.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: grace}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "graceful"},
		Spec: corev1.ServiceSpec{Selector: clone.Spec.Selector.MatchLabels,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "graceful", "ready on v1", harness.RolledOut(1))
	var p *corev1.Pod
	for _, x := range listPods(t, cs, ns) {
		p = x
	}
	ip := p.Status.PodIP
	waitEndpoint(t, cs, ns, "graceful", ip, true, "ready on v1")

	// A merge patch replaces the containers list: it must carry the ports too, or the change is not
	// in place.
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q,"ports":[{"name":"http","containerPort":8080}]}]}}}}`,
		sb.Image("app:v2"))
	if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	// Poll (every 100 ms) for the endpoint going not ready, then for the restart.
	var outAt, restartAt time.Time
	harness.Eventually(t, 60*time.Second, "endpoint not ready, then the container restarted", func() (bool, string) {
		now := time.Now()
		got, err := cs.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		restarts := got.Status.ContainerStatuses[0].RestartCount
		if ready, found := endpointReady(cs, ns, "graceful", ip); found && !ready && outAt.IsZero() && restarts == 0 {
			outAt = now
		}
		if restarts > 0 && restartAt.IsZero() {
			restartAt = now
		}
		return !restartAt.IsZero(), harness.DescribePod(got)
	})
	if outAt.IsZero() {
		t.Fatal("the container restarted before the endpoint was seen not ready")
	}
	t.Logf("endpoint not ready %.1fs before the container restarted (grace %ds)", restartAt.Sub(outAt).Seconds(), grace)
	if restartAt.Sub(outAt) < (grace-1)*time.Second {
		t.Errorf("the container restarted %.1fs after the endpoint went not ready; want about the grace period of %ds",
			restartAt.Sub(outAt).Seconds(), grace)
	}
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "graceful", "rolled out to v2", harness.RolledOut(1))
	waitEndpoint(t, cs, ns, "graceful", ip, true, "ready again on v2")
	after := listPods(t, cs, ns)
	harness.CheckUpdatedInPlace(t, map[string]*corev1.Pod{p.Name: p}, after, 1)
	if got := execIn(t, sb, ns, p.Name, "cat", "/etc/app-version"); got != "v2" {
		t.Errorf("pod %s says %q after the rollout, want v2", p.Name, got)
	}
}

// resizeInPlace: with InPlaceWorkloadVerticalScaling, a CPU change of a CloneSet's template resizes
// the running container through pods/resize (same pod, no restart, the kubelet reports the new
// resources); a change that would move the pod to another QoS class recreates it.
func resizeInPlace(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	if err := sb.RestartKruiseManager(ctx, "InPlaceWorkloadVerticalScaling=true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.RestartKruiseManager(context.Background(), ""); err != nil {
			t.Errorf("restore the manager's feature gates: %v", err)
		}
	})
	ns := harness.Namespace(t, cs)
	pod := realPod("app", sb.Image("app:v1")).Spec
	pod.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("32Mi")}}
	clone := harness.NewCloneSet(ns, "sized", 1, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, pod)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "sized", "ready", harness.RolledOut(1))
	before := listPods(t, cs, ns)
	resources := func(req, lim, memReq string) string {
		return fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q,"resources":{"requests":{"cpu":%q,"memory":%q},"limits":{"cpu":%q,"memory":"32Mi"}}}]}}}}`,
			sb.Image("app:v1"), req, memReq, lim)
	}
	if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, []byte(resources("80m", "200m", "16Mi")))); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "sized", "resized", harness.RolledOut(1))
	t.Logf("resized in place in %.1fs", time.Since(t0).Seconds())
	after := listPods(t, cs, ns)
	for name, p := range after {
		b, ok := before[name]
		if !ok || b.UID != p.UID {
			t.Fatalf("pod %s was recreated by a CPU change", name)
		}
		st := p.Status.ContainerStatuses[0]
		if st.RestartCount != 0 || st.Resources == nil || st.Resources.Requests.Cpu().String() != "80m" || st.Resources.Limits.Cpu().String() != "200m" {
			t.Errorf("pod %s after the resize: restarts %d, status resources %+v", name, st.RestartCount, st.Resources)
		}
	}
	// Guaranteed (requests = limits) is another QoS class: the pod is recreated.
	if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, []byte(resources("200m", "200m", "32Mi")))); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 90*time.Second, "a new pod for the QoS change", func() (bool, string) {
		ps := listPods(t, cs, ns)
		for name, p := range ps {
			if _, old := after[name]; !old && p.Status.QOSClass == corev1.PodQOSGuaranteed {
				return true, ""
			}
		}
		return false, fmt.Sprint(len(ps))
	})
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "sized", "rolled out", harness.RolledOut(1))
}
