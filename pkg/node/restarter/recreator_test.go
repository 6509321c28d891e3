package restarter

import (
	"context"
	"errors"
	"slices"
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
	"github.com/kruise-ng/kruise/pkg/node/criruntime"
)

// fakeRuntime holds containers by name (newest last); StopContainer exits one, and the test plays
// the kubelet by starting a new one. ExecSync runs a preStop hook: "hang" never ends by itself.
type fakeRuntime struct {
	internalapi.RuntimeService
	mu         sync.Mutex // the recreator's workers call it at once
	containers map[string][]*runtimeapi.Container
	stops      []string
	graces     []int64 // the grace period of each stop
	failStop   string
	n          int64
	env        map[string]string // container ID → APP_CONFIG it runs with (reported in verbose status)
	execs      []time.Duration   // the timeout of each ExecSync
}

func (f *fakeRuntime) ExecSync(ctx context.Context, _ string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	f.mu.Lock()
	f.execs = append(f.execs, timeout)
	f.mu.Unlock()
	if len(cmd) > 0 && cmd[0] == "hang" {
		select { // as a runtime does: until the call's context or the exec's timeout ends
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(timeout):
			return nil, nil, errors.New("timed out")
		}
	}
	return nil, nil, nil
}

func (f *fakeRuntime) stopped() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.stops)
}

func (f *fakeRuntime) start(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	f.containers[name] = append(f.containers[name], &runtimeapi.Container{Id: name + "-" + string(rune('0'+f.n)), CreatedAt: f.n,
		State: runtimeapi.ContainerState_CONTAINER_RUNNING, Labels: map[string]string{criruntime.ContainerNameLabel: name}})
}

func (f *fakeRuntime) ListContainers(_ context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.Container
	for _, c := range f.containers[filter.LabelSelector[criruntime.ContainerNameLabel]] {
		out = append(out, &runtimeapi.Container{Id: c.Id, CreatedAt: c.CreatedAt, State: c.State, Labels: c.Labels})
	}
	return out, nil
}

func (f *fakeRuntime) ContainerStatus(_ context.Context, id string, _ bool) (*runtimeapi.ContainerStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	resp := &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: id, StartedAt: time.Now().Add(-time.Minute).UnixNano()}}
	if v, ok := f.env[id]; ok {
		resp.Info = map[string]string{"info": `{"runtimeSpec":{"process":{"env":["PATH=/bin","APP_CONFIG=` + v + `"]}}}`}
	}
	return resp, nil
}

func (f *fakeRuntime) StopContainer(_ context.Context, id string, grace int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.graces = append(f.graces, grace)
	for name, cs := range f.containers {
		if c := cs[len(cs)-1]; c.Id == id {
			if name == f.failStop {
				return errors.New("runtime refused")
			}
			c.State = runtimeapi.ContainerState_CONTAINER_EXITED
			f.stops = append(f.stops, name)
		}
	}
	return nil
}

func setup(t *testing.T, strategy *v1alpha1.ContainerRecreateRequestStrategy, names ...string) (*Recreator, *fakeRuntime, client.Client, *v1alpha1.ContainerRecreateRequest) {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	rt := &fakeRuntime{containers: map[string][]*runtimeapi.Container{}}
	crr := &v1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r",
		Labels: map[string]string{v1alpha1.ContainerRecreateRequestPodUIDKey: "uid"}},
		Spec: v1alpha1.ContainerRecreateRequestSpec{PodName: "p", Strategy: strategy}}
	for _, n := range names {
		rt.start(n)
		crr.Spec.Containers = append(crr.Spec.Containers, v1alpha1.ContainerRecreateRequestContainer{Name: n,
			StatusContext: &v1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://" + rt.containers[n][0].Id}})
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pod, crr).WithStatusSubresource(crr).Build()
	return &Recreator{Client: c, Runtime: rt, Log: logr.Discard(), Poll: time.Millisecond}, rt, c, crr
}

func step(t *testing.T, r *Recreator, c client.Client, crr *v1alpha1.ContainerRecreateRequest) *v1alpha1.ContainerRecreateRequest {
	t.Helper()
	cur := &v1alpha1.ContainerRecreateRequest{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(crr), cur); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Step(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(crr), cur); err != nil {
		t.Fatal(err)
	}
	return cur
}

func TestStepOrderedRecreate(t *testing.T) {
	r, rt, c, crr := setup(t, &v1alpha1.ContainerRecreateRequestStrategy{OrderedRecreate: true}, "a", "b")
	got := step(t, r, c, crr)
	if len(rt.stops) != 1 || rt.stops[0] != "a" || got.Status.Phase != v1alpha1.ContainerRecreateRequestRecreating {
		t.Fatalf("first step stopped %v (phase %s), want only a", rt.stops, got.Status.Phase)
	}
	step(t, r, c, crr)
	if len(rt.stops) != 1 {
		t.Fatalf("b was stopped (%v) before a ran again", rt.stops)
	}
	rt.start("a") // the kubelet
	got = step(t, r, c, crr)
	if len(rt.stops) != 2 || rt.stops[1] != "b" || state(&got.Status, "a").Phase != v1alpha1.ContainerRecreateRequestSucceeded {
		t.Fatalf("after a restarted: stops %v, a is %s; want a Succeeded and b stopped next", rt.stops, state(&got.Status, "a").Phase)
	}
	rt.start("b")
	got = step(t, r, c, crr)
	if got.Status.Phase != v1alpha1.ContainerRecreateRequestCompleted || got.Status.Message != "2/2 containers recreated" || got.Status.CompletionTime == nil {
		t.Errorf("final status %+v", got.Status)
	}
}

func TestStepUnorderedStopsAllAtOnce(t *testing.T) {
	r, rt, c, crr := setup(t, nil, "a", "b")
	step(t, r, c, crr)
	if len(rt.stops) != 2 {
		t.Errorf("stops %v, want both at once", rt.stops)
	}
}

func TestStepFailurePolicy(t *testing.T) {
	r, rt, c, crr := setup(t, &v1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: v1alpha1.ContainerRecreateRequestFailurePolicyFail}, "a", "b")
	rt.failStop = "a"
	got := step(t, r, c, crr)
	if got.Status.Phase != v1alpha1.ContainerRecreateRequestCompleted || len(rt.stops) != 0 {
		t.Fatalf("Fail: status %+v, stops %v; want completed with nothing stopped", got.Status, rt.stops)
	}
	for _, s := range got.Status.ContainerRecreateStates {
		if s.Phase != v1alpha1.ContainerRecreateRequestFailed {
			t.Errorf("Fail: %s is %s, want Failed", s.Name, s.Phase)
		}
	}

	r, rt, c, crr = setup(t, &v1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: v1alpha1.ContainerRecreateRequestFailurePolicyIgnore}, "a", "b")
	rt.failStop = "a"
	step(t, r, c, crr)
	rt.start("b")
	got = step(t, r, c, crr)
	if got.Status.Phase != v1alpha1.ContainerRecreateRequestCompleted || got.Status.Message != "1/2 containers recreated" {
		t.Errorf("Ignore: status %+v, want b recreated despite a", got.Status)
	}
}

func TestStepWaitsForUnreadyGrace(t *testing.T) {
	r, rt, c, crr := setup(t, &v1alpha1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: new(int64)}, "a")
	step(t, r, c, crr)
	if len(rt.stops) != 0 {
		t.Fatal("stopped before the manager acquired the unready hold")
	}
	cur := &v1alpha1.ContainerRecreateRequest{}
	_ = c.Get(context.Background(), client.ObjectKeyFromObject(crr), cur)
	cur.Annotations = map[string]string{v1alpha1.ContainerRecreateRequestUnreadyAcquiredKey: time.Now().UTC().Format(time.RFC3339)}
	if err := c.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	step(t, r, c, crr)
	if len(rt.stops) != 1 {
		t.Errorf("stops %v after the hold (grace 0), want a", rt.stops)
	}
}

func TestStepRestartsAgainOnStaleEnv(t *testing.T) {
	r, rt, c, crr := setup(t, nil, "app")
	pod := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "p"}, pod); err != nil {
		t.Fatal(err)
	}
	pod.Annotations = map[string]string{"app-config": "two"}
	pod.Spec.Containers = []corev1.Container{{Name: "app", Env: []corev1.EnvVar{{Name: "APP_CONFIG", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['app-config']"}}}}}}
	if err := c.Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	rt.env = map[string]string{}
	step(t, r, c, crr)
	rt.start("app") // the kubelet had not seen the new annotation yet
	rt.env[rt.containers["app"][1].Id] = "one"
	got := step(t, r, c, crr)
	if len(rt.stops) != 2 || got.Status.Phase == v1alpha1.ContainerRecreateRequestCompleted {
		t.Fatalf("stale env: stops %v, phase %s; want a second stop", rt.stops, got.Status.Phase)
	}
	rt.start("app")
	rt.env[rt.containers["app"][2].Id] = "two"
	got = step(t, r, c, crr)
	if got.Status.Phase != v1alpha1.ContainerRecreateRequestCompleted || got.Status.ContainerRecreateStates[0].Phase != v1alpha1.ContainerRecreateRequestSucceeded {
		t.Errorf("fresh env: status %+v, want completed", got.Status)
	}
}

func TestSettleOnlyForMetadataEnv(t *testing.T) {
	now := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	crr := &v1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now)}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"k": "v"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "reads", Env: []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['k']"}}}}},
		{Name: "plain", Env: []corev1.EnvVar{{Name: "X", Value: "1"}}}}}}
	if got := settle(crr, pod, "reads", now); got != time.Second+EnvSettle {
		t.Errorf("a container reading an annotation, request just made: wait %s, want %s", got, time.Second+EnvSettle)
	}
	if got := settle(crr, pod, "reads", now.Add(time.Minute)); got != 0 {
		t.Errorf("a minute later: wait %s", got)
	}
	if got := settle(crr, pod, "plain", now); got != 0 {
		t.Errorf("a container without metadata env: wait %s", got)
	}
}

// A request whose pod was replaced (another UID under the same name) is not acted on.
func TestStepLeavesAnotherPodAlone(t *testing.T) {
	r, rt, c, crr := setup(t, nil, "a")
	cur := &v1alpha1.ContainerRecreateRequest{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(crr), cur); err != nil {
		t.Fatal(err)
	}
	cur.Labels[v1alpha1.ContainerRecreateRequestPodUIDKey] = "old-uid"
	if err := c.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	got := step(t, r, c, crr)
	if len(rt.stops) != 0 || got.Status.Phase == v1alpha1.ContainerRecreateRequestRecreating || got.Status.Message == "" {
		t.Errorf("stops %v, phase %q, message %q; want nothing stopped and the reason recorded", rt.stops, got.Status.Phase, got.Status.Message)
	}
}
