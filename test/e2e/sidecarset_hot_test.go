package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/controller/sidecarset"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/test/harness"
)

const hotEmptyImage = "registry.example/empty:v1"

// hotState is what a test checks of one pod's hot-upgrade sidecar mesh.
type hotState struct {
	images   [2]string // spec images of mesh-1, mesh-2
	working  string
	restarts [2]int32 // of mesh-1, mesh-2
}

func hotStateOf(p *corev1.Pod) hotState {
	var st hotState
	st.working, _ = sidecarrules.HotUpgradePair(p, "mesh")
	for _, c := range p.Spec.Containers {
		switch c.Name {
		case "mesh-1":
			st.images[0] = c.Image
		case "mesh-2":
			st.images[1] = c.Image
		}
	}
	for _, c := range p.Status.ContainerStatuses {
		switch c.Name {
		case "mesh-1":
			st.restarts[0] = c.RestartCount
		case "mesh-2":
			st.restarts[1] = c.RestartCount
		}
	}
	return st
}

// watchBothRunning follows the pods from now on and returns, per pod, whether both copies of
// mesh were once seen ready at the same time, each on an image other than the empty one — the
// hand-over a hot upgrade exists for.
func watchBothRunning(t *testing.T, ns, selector string) (seen func() map[string]bool, stop func()) {
	t.Helper()
	w, err := cs.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	both := map[string]bool{}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			n := 0
			for _, c := range p.Status.ContainerStatuses {
				if (c.Name == "mesh-1" || c.Name == "mesh-2") && c.Ready && c.Image != hotEmptyImage {
					n++
				}
			}
			mu.Lock()
			both[p.Name] = both[p.Name] || n == 2
			mu.Unlock()
		}
	}()
	return func() map[string]bool {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]bool{}
		for k, v := range both {
			out[k] = v
		}
		return out
	}, w.Stop
}

// A HotUpgrade sidecar injected into a CloneSet's pods is upgraded twice in place, each time in
// two steps: the idle copy gets the new image and the work, both copies run, then the old copy is
// flipped to the empty image. The work goes mesh-1 → mesh-2 → mesh-1, the version annotations
// follow the SidecarSet's resourceVersion as OpenKruise writes them, and no pod is recreated nor
// its app container restarted.
func TestSidecarSetHotUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newSidecarSet("hot-"+ns, ns, "hot", corev1.Container{Name: "mesh", Image: "registry.example/mesh:v1"}, "")
	set.Spec.Containers[0].UpgradeStrategy = appsv1beta1.SidecarSetContainerUpgradeStrategy{
		UpgradeType: appsv1beta1.SidecarSetHotUpgrade, HotUpgradeEmptyImage: hotEmptyImage}
	set = createSidecarSet(t, c, set)
	const replicas = 2
	clone := newCloneSet(ns, "hot", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "hot", "all ready", harness.RolledOut(replicas))
	waitSidecarSet(t, c, set.Name, "matches the pods", func(s *appsv1beta1.SidecarSet) bool {
		return s.Status.MatchedPods == replicas && s.Status.UpdatedReadyPods == replicas
	})
	before := podsByName(t, ns, "app=hot")
	if len(before) != replicas {
		t.Fatalf("%d pods, want %d", len(before), replicas)
	}
	for name, p := range before {
		if got, want := containerNames(p.Spec.Containers), []string{"mesh-1", "mesh-2", "app"}; !slices.Equal(got, want) {
			t.Fatalf("pod %s: containers %v, want %v", name, got, want)
		}
		if got, want := hotStateOf(p), (hotState{images: [2]string{"registry.example/mesh:v1", hotEmptyImage}, working: "mesh-1"}); got != want {
			t.Errorf("pod %s after injection: %+v, want %+v", name, got, want)
		}
		checkVersions(t, p, "1", "0", "0", "1")
	}

	patchImage := func(image string) {
		t.Helper()
		// A JSON patch: a merge patch would replace the whole container, upgradeStrategy included.
		patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/containers/0/image","value":%q}]`, image)
		if err := c.Patch(ctx, set, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	// rollOut changes the image and waits until every pod runs it, its old copy flipped.
	rollOut := func(image string, want hotState) map[string]*corev1.Pod {
		t.Helper()
		seen, stop := watchBothRunning(t, ns, "app=hot")
		patchImage(image)
		waitSidecarSet(t, c, set.Name, "rolled out "+image, func(s *appsv1beta1.SidecarSet) bool {
			return s.Status.UpdatedPods == replicas && s.Status.UpdatedReadyPods == replicas && s.Status.ReadyPods == replicas
		})
		stop()
		after := podsByName(t, ns, "app=hot")
		both := seen()
		for name, p := range after {
			if got := hotStateOf(p); got != want {
				t.Errorf("pod %s after %s: %+v, want %+v\n%s", name, image, got, want, describe(p))
			}
			if !both[name] {
				t.Errorf("pod %s: both copies of mesh were never seen running at once during the hot upgrade to %s", name, image)
			}
			if condition(p, sidecarrules.UpgradableCondition) != corev1.ConditionTrue {
				t.Errorf("pod %s: %s is not True: %s", name, sidecarrules.UpgradableCondition, describe(p))
			}
			checkUntouched(t, before[name], p)
		}
		return after
	}

	// First change: mesh-2 takes over, mesh-1 is flipped.
	after := rollOut("registry.example/mesh:v2", hotState{
		images: [2]string{hotEmptyImage, "registry.example/mesh:v2"}, working: "mesh-2", restarts: [2]int32{1, 1}})
	for _, p := range after {
		// upgrade: version(mesh-2) = versionalt(mesh-1) = the resourceVersion, versionalt(mesh-2) =
		// mesh-1's version "1"; flip: version(mesh-1) = versionalt(mesh-2) = "0".
		rv := p.Annotations[sidecarrules.VersionAnnotationPrefix+"mesh-2"]
		checkVersions(t, p, "0", rv, rv, "0")
		if rv == "" || rv == "0" || rv == "1" {
			t.Errorf("pod %s: version of mesh-2 is %q, want the SidecarSet's resourceVersion", p.Name, rv)
		}
	}
	// Second change: the work goes back to mesh-1, mesh-2 is flipped.
	after = rollOut("registry.example/mesh:v3", hotState{
		images: [2]string{"registry.example/mesh:v3", hotEmptyImage}, working: "mesh-1", restarts: [2]int32{2, 2}})
	for _, p := range after {
		rv := p.Annotations[sidecarrules.VersionAnnotationPrefix+"mesh-1"]
		checkVersions(t, p, rv, "0", "0", rv)
		if rv == "" || rv == "0" || rv == "1" {
			t.Errorf("pod %s: version of mesh-1 is %q, want the SidecarSet's resourceVersion", p.Name, rv)
		}
	}

	// Each flip left an event on its pod.
	evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	flips := map[string]int{}
	for _, e := range evs.Items {
		if e.Reason == sidecarset.ReasonFlipped && e.Regarding.Kind == "Pod" {
			flips[e.Regarding.Name]++
		}
	}
	for name := range after {
		if flips[name] == 0 {
			t.Errorf("pod %s: no %s event (events: %v)", name, sidecarset.ReasonFlipped, flips)
		}
	}
}

// checkVersions checks the version and versionalt annotations of mesh-1 and mesh-2.
func checkVersions(t *testing.T, p *corev1.Pod, v1, alt1, v2, alt2 string) {
	t.Helper()
	want := map[string]string{
		sidecarrules.VersionAnnotationPrefix + "mesh-1": v1, sidecarrules.VersionAltAnnotationPrefix + "mesh-1": alt1,
		sidecarrules.VersionAnnotationPrefix + "mesh-2": v2, sidecarrules.VersionAltAnnotationPrefix + "mesh-2": alt2,
	}
	for k, v := range want {
		if got, ok := p.Annotations[k]; !ok || got != v {
			t.Errorf("pod %s: %s = %q (set %v), want %q", p.Name, k, got, ok, v)
		}
	}
}

// checkUntouched checks pod after is pod before, upgraded in place: same UID, the app container
// never restarted.
func checkUntouched(t *testing.T, before, after *corev1.Pod) {
	t.Helper()
	if before == nil || before.UID != after.UID {
		t.Errorf("pod %s was recreated", after.Name)
		return
	}
	appID := func(p *corev1.Pod) (string, int32) {
		for _, c := range p.Status.ContainerStatuses {
			if c.Name == "app" {
				return c.ContainerID, c.RestartCount
			}
		}
		return "", -1
	}
	id0, _ := appID(before)
	id1, restarts := appID(after)
	if id0 != id1 || restarts != 0 {
		t.Errorf("pod %s: the app container restarted (%d restarts, container %s, was %s)", after.Name, restarts, id1, id0)
	}
}
