package e2enode

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// registryDelay makes the test's registry slow, as a remote one is: each manifest request waits.
const registryDelay = 2 * time.Second

// cloneSetPreDownload: a 5-pod CloneSet on the real node rolls app:v1 → app:v2 from a slow
// registry with pre-download on. While the partition holds every pod, the CloneSet's ImagePullJob
// pulls app:v2 onto the node; then the rollout restarts each container once, in place, on v2, and
// the job is deleted. The same rollout without pre-download (the gate off) is timed for comparison.
func cloneSetPreDownload(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	reg := startTestRegistry(t, sb, "", "")
	reg.mu.Lock()
	reg.delay = registryDelay
	reg.mu.Unlock()
	const replicas = 5
	image := func(tag string) string { return reg.Host + "/app:" + tag }
	clone := harness.NewCloneSet(ns, "pre", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, realPod("app", image("v1")).Spec)
	clone.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromInt32(replicas))
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 120*time.Second, ns, "pre", "5 pods ready on v1", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.ReadyReplicas == replicas && cs.Status.UpdatedReadyReplicas == replicas
	})
	before := listPods(t, cs, ns)
	setImage := func(img string) {
		patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, img)
		if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	setPartition := func(n int32) {
		patch := fmt.Sprintf(`{"spec":{"updateStrategy":{"partition":%d}}}`, n)
		if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}

	setImage(image("v2"))
	t0 := time.Now()
	var job *v1beta1.ImagePullJob
	harness.Eventually(t, 60*time.Second, "the CloneSet's pre-download job pulled app:v2 onto the node", func() (bool, string) {
		jobs := &v1beta1.ImagePullJobList{}
		if err := c.List(ctx, jobs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if ref := metav1.GetControllerOf(j); ref != nil && ref.Kind == "CloneSet" && ref.Name == "pre" && j.Spec.Image == image("v2") {
				job = j
				return j.Status.CompletionTime != nil && j.Status.Succeeded == 1, fmt.Sprintf("job %s: %+v", j.Name, j.Status)
			}
		}
		return false, fmt.Sprintf("%d jobs, none of the CloneSet's for %s", len(jobs.Items), image("v2"))
	})
	t.Logf("pre-download job %s done in %.1fs (registry delay %s per manifest)", job.Name, time.Since(t0).Seconds(), registryDelay)
	if st := nodeTag(t, c, image("v2")); st == nil || st.Phase != v1beta1.NodeImagePullSucceeded {
		t.Errorf("NodeImage reports %+v for app:v2, want Succeeded", st)
	}
	for name, p := range listPods(t, cs, ns) {
		if st := p.Status.ContainerStatuses[0]; st.RestartCount != 0 || p.Spec.Containers[0].Image != image("v1") {
			t.Fatalf("pod %s was touched before the partition allowed it: restarts %d, image %s", name, st.RestartCount, p.Spec.Containers[0].Image)
		}
	}

	setPartition(0)
	t0 = time.Now()
	harness.WaitCloneSet(t, c, 120*time.Second, ns, "pre", "rolled out to v2", harness.RolledOut(replicas))
	with := time.Since(t0)
	after := listPods(t, cs, ns)
	harness.CheckUpdatedInPlace(t, before, after, replicas)
	for name := range after {
		if got := execIn(t, sb, ns, name, "cat", "/etc/app-version"); got != "v2" {
			t.Errorf("pod %s says %q after the rollout, want v2", name, got)
		}
	}
	harness.Eventually(t, 30*time.Second, "the pre-download job is deleted after the rollout", func() (bool, string) {
		err := c.Get(ctx, client.ObjectKeyFromObject(job), &v1beta1.ImagePullJob{})
		return err != nil, fmt.Sprintf("get: %v", err)
	})

	// The same rollout without pre-download: the first restarted pod waits for the pull.
	if err := sb.RestartKruiseManager(ctx, ""); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := sb.RestartKruiseManager(ctx, sandbox.DaemonGates); err != nil {
			t.Error(err)
		}
	}()
	setImage(image("v2-retag"))
	t0 = time.Now()
	harness.WaitCloneSet(t, c, 120*time.Second, ns, "pre", "rolled out to v2-retag", harness.RolledOut(replicas))
	without := time.Since(t0)
	t.Logf("5-pod in-place rollout on the real node from a registry with %s per manifest: %.1fs with pre-download (after the job), %.1fs without",
		registryDelay, with.Seconds(), without.Seconds())
	if with >= without {
		t.Logf("note: with pre-download was not faster here (%.1fs ≥ %.1fs)", with.Seconds(), without.Seconds())
	}
}
