package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

// Container launch priority: an in-place update of both containers of a pod goes in batches, the
// higher KRUISE_CONTAINER_PRIORITY first; the other container's image changes only once the first
// runs its new image and is ready. The state annotation records both batches.
func TestCloneSetContainerLaunchPriority(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	spec := corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](1), Containers: []corev1.Container{
		{Name: "app", Image: "registry.example/app:v1"},
		{Name: "proxy", Image: "registry.example/proxy:v1", Env: []corev1.EnvVar{{Name: appspub.ContainerLaunchPriorityEnvName, Value: "10"}}}}}
	clone := harness.NewCloneSet(ns, "prio", 2, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, spec)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "prio", "ready", harness.RolledOut(2))
	before := podsByName(t, ns, "app=prio")

	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"},`+
		`{"name":"proxy","image":"registry.example/proxy:v2","env":[{"name":"KRUISE_CONTAINER_PRIORITY","value":"10"}]}]}}}}`)
	proxyReady, appPatched := map[string]time.Time{}, map[string]time.Time{}
	harness.Eventually(t, time.Minute, "both containers of every pod on v2", func() (bool, string) {
		now := time.Now()
		done := 0
		for name, p := range podsByName(t, ns, "app=prio") {
			for _, st := range p.Status.ContainerStatuses {
				if st.Name == "proxy" && st.Image == "registry.example/proxy:v2" && st.Ready && proxyReady[name].IsZero() {
					proxyReady[name] = now
				}
			}
			if p.Spec.Containers[0].Image == "registry.example/app:v2" {
				if appPatched[name].IsZero() {
					appPatched[name] = now
				}
				done++
			}
		}
		return done == 2, fmt.Sprint(appPatched)
	})
	waitCloneSet(t, c, ns, "prio", "rolled out", harness.RolledOut(2))
	after := podsByName(t, ns, "app=prio")
	for name, p := range after {
		if b, ok := before[name]; !ok || b.UID != p.UID {
			t.Errorf("pod %s was recreated", name)
		}
		if proxyReady[name].IsZero() || appPatched[name].Before(proxyReady[name]) {
			t.Errorf("pod %s: app patched at %v, proxy ready on v2 at %v; want the proxy (priority 10) first", name,
				appPatched[name], proxyReady[name])
		}
		var state appspub.InPlaceUpdateState
		if err := json.Unmarshal([]byte(p.Annotations[appspub.InPlaceUpdateStateKey]), &state); err != nil {
			t.Fatal(err)
		}
		if b := state.ContainerBatchesRecord; len(b) != 2 || b[0].Containers[0] != "proxy" || b[1].Containers[0] != "app" ||
			len(state.NextContainerImages) != 0 {
			t.Errorf("pod %s: batches %+v, next %v", name, b, state.NextContainerImages)
		}
		for _, st := range p.Status.ContainerStatuses {
			if st.RestartCount != 1 {
				t.Errorf("pod %s container %s restarted %d times, want 1", name, st.Name, st.RestartCount)
			}
		}
	}
}
