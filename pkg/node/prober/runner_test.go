package prober

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/node/containeraction"
	"github.com/kruise-ng/kruise/pkg/node/criruntime"
)

// probeRuntime has one running container "main" per pod; an exec succeeds while ok, and each one
// holds for hold, counting how many run at once.
type probeRuntime struct {
	internalapi.RuntimeService
	mu            sync.Mutex
	ok            bool
	hold          time.Duration
	running, peak int
	execs         int
}

func (f *probeRuntime) ListContainers(_ context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	if filter.LabelSelector[criruntime.ContainerNameLabel] != "main" {
		return nil, nil
	}
	return []*runtimeapi.Container{{Id: filter.LabelSelector[criruntime.PodUIDLabel] + "-main", CreatedAt: 1,
		State: runtimeapi.ContainerState_CONTAINER_RUNNING}}, nil
}

func (f *probeRuntime) ContainerStatus(_ context.Context, id string, _ bool) (*runtimeapi.ContainerStatusResponse, error) {
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: id, StartedAt: time.Now().Add(-time.Minute).UnixNano()}}, nil
}

func (f *probeRuntime) ExecSync(context.Context, string, []string, time.Duration) ([]byte, []byte, error) {
	f.mu.Lock()
	f.running++
	f.execs++
	f.peak = max(f.peak, f.running)
	ok := f.ok
	f.mu.Unlock()
	time.Sleep(f.hold)
	f.mu.Lock()
	f.running--
	f.mu.Unlock()
	if !ok {
		return nil, []byte("not idle"), errors.New("command exited with 1")
	}
	return []byte("idle\n"), nil, nil
}

func (f *probeRuntime) set(ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ok = ok
}

func nodePodProbe(pods int, containers ...string) *v1alpha1.NodePodProbe {
	npp := &v1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	for i := range pods {
		name := string(rune('a' + i))
		pp := v1alpha1.NodePodProbePodProbe{Namespace: "ns", Name: name, UID: "uid-" + name, IP: "10.0.0.1"}
		for _, c := range containers {
			pp.Probes = append(pp.Probes, v1alpha1.NodePodProbeContainerProbe{Name: "m#" + c, ContainerName: c,
				Probe: v1alpha1.PodProbeMarkerProbeSpec{Exec: &corev1.ExecAction{Command: []string{"idle"}}, TimeoutSeconds: 1,
					PeriodSeconds: 1, SuccessThreshold: 1, FailureThreshold: 2}})
		}
		npp.Spec.PodProbes = append(npp.Spec.PodProbes, pp)
	}
	return npp
}

func setup(t *testing.T, rt *probeRuntime, workers int, npp *v1alpha1.NodePodProbe) (*Runner, client.Client, context.Context) {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&v1alpha1.NodePodProbe{}).WithObjects(npp).Build()
	r := &Runner{Client: c, Runtime: rt, Node: "n1", Workers: workers, Log: logr.Discard()}
	r.init()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); r.stopAll() })
	if err := r.sync(ctx, c); err != nil {
		t.Fatal(err)
	}
	return r, c, ctx
}

// states writes the status and returns it by pod and probe.
func states(t *testing.T, r *Runner, c client.Client, ctx context.Context) map[string]v1alpha1.NodePodProbeContainerProbeState {
	t.Helper()
	if err := r.write(ctx, c); err != nil {
		t.Fatal(err)
	}
	npp := &v1alpha1.NodePodProbe{}
	if err := c.Get(ctx, client.ObjectKey{Name: "n1"}, npp); err != nil {
		t.Fatal(err)
	}
	out := map[string]v1alpha1.NodePodProbeContainerProbeState{}
	for _, ps := range npp.Status.PodProbeStatuses {
		for _, st := range ps.ProbeStates {
			out[ps.Name+"/"+st.Name] = st
		}
	}
	return out
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if f() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// A probe's state follows its results through the thresholds; a missing container is reported as
// a failure with its reason, not a crash.
func TestRunnerStates(t *testing.T) {
	rt := &probeRuntime{ok: true}
	r, c, ctx := setup(t, rt, 4, nodePodProbe(1, "main", "typo"))
	var got map[string]v1alpha1.NodePodProbeContainerProbeState
	waitFor(t, "both probes decided", func() bool { got = states(t, r, c, ctx); return len(got) == 2 })
	if st := got["a/m#main"]; st.State != v1alpha1.PodProbeMarkerStateSucceeded || st.Message != "idle" {
		t.Errorf("main: %+v", st)
	}
	if st := got["a/m#typo"]; st.State != v1alpha1.PodProbeMarkerStateFailed || st.Message != `container "typo" is not in pod ns/a` {
		t.Errorf("a probe of a missing container: %+v", st)
	}
	first := got["a/m#main"].LastTransitionTime
	rt.set(false)
	waitFor(t, "the failure after failureThreshold runs", func() bool {
		got = states(t, r, c, ctx)
		return got["a/m#main"].State == v1alpha1.PodProbeMarkerStateFailed
	})
	if last := got["a/m#main"].LastTransitionTime; last.Before(&first) {
		t.Errorf("transition time went back: %v", got["a/m#main"])
	}
	// The probe leaves the spec: its worker stops and its state leaves the status.
	npp := &v1alpha1.NodePodProbe{}
	_ = c.Get(ctx, client.ObjectKey{Name: "n1"}, npp)
	npp.Spec.PodProbes[0].Probes = npp.Spec.PodProbes[0].Probes[:1]
	if err := c.Update(ctx, npp); err != nil {
		t.Fatal(err)
	}
	if err := r.sync(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got = states(t, r, c, ctx); len(got) != 1 {
		t.Errorf("states %v, want main's only", got)
	}
}

// At most Workers probes run at once, whatever the number of pods.
func TestRunnerBoundsConcurrency(t *testing.T) {
	rt := &probeRuntime{ok: true, hold: 200 * time.Millisecond}
	r, c, ctx := setup(t, rt, 2, nodePodProbe(6, "main"))
	waitFor(t, "every pod probed", func() bool { return len(states(t, r, c, ctx)) == 6 })
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.peak > 2 || rt.peak < 1 {
		t.Errorf("%d probes ran at once, want at most 2", rt.peak)
	}
}

func TestJudgeAndCounter(t *testing.T) {
	http := containeraction.Handler{HTTPGet: &corev1.HTTPGetAction{}}
	if r, _ := Judge(http, containeraction.Outcome{HTTPStatus: 302}, nil); r != Succeeded {
		t.Error("HTTP 302 is a success, as for the kubelet")
	}
	if r, msg := Judge(http, containeraction.Outcome{HTTPStatus: 503}, nil); r != Failed || msg == "" {
		t.Error("HTTP 503 is a failure")
	}
	spec := &v1alpha1.PodProbeMarkerProbeSpec{SuccessThreshold: 2, FailureThreshold: 3}
	var c Counter
	for i, step := range []struct {
		r    Result
		want v1alpha1.PodProbeMarkerState
	}{{Succeeded, ""}, {Skipped, ""}, {Succeeded, "Succeeded"}, {Failed, ""}, {Missing, ""}, {Succeeded, ""}, {Failed, ""},
		{Failed, ""}, {Failed, "Failed"}} {
		if got := c.Add(step.r, spec); got != step.want {
			t.Errorf("step %d (%v): %q, want %q", i, step.r, got, step.want)
		}
	}
	now := time.Now()
	if Due(&v1alpha1.PodProbeMarkerProbeSpec{InitialDelaySeconds: 10}, now.Add(-5*time.Second), now) {
		t.Error("due before the initial delay")
	}
}
