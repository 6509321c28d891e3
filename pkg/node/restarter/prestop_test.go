package restarter

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func execHook(cmd ...string) *v1alpha1.ContainerRecreateRequestPreStop {
	return &v1alpha1.ContainerRecreateRequestPreStop{Exec: &corev1.ExecAction{Command: cmd}}
}

// An exec hook gets the runtime's timeout in whole seconds (never 0, which CRI reads as none) and
// is cut at the cap or at the end of the grace period, whichever comes first; the container is then
// stopped with the grace period left.
func TestPreStopExecBounded(t *testing.T) {
	for name, tc := range map[string]struct {
		grace        int64
		maxPreStop   time.Duration
		cmd          string
		least, most  time.Duration // how long stop takes
		wantTimeout  time.Duration
		wantGraceMin int64
	}{
		"a hanging hook is cut at the cap":         {30, 200 * time.Millisecond, "hang", 200 * time.Millisecond, time.Second, time.Second, 29},
		"the grace period ends first":              {1, 5 * time.Minute, "hang", time.Second, 2 * time.Second, time.Second, 0},
		"no cap: the grace period only":            {1, 0, "hang", time.Second, 2 * time.Second, time.Second, 0},
		"the runtime's timeout is the capped time": {30, 3 * time.Second, "true", 0, 500 * time.Millisecond, 3 * time.Second, 29},
	} {
		t.Run(name, func(t *testing.T) {
			r, rt, _, crr := setup(t, nil, "app")
			r.MaxPreStop = tc.maxPreStop
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To(tc.grace)}}
			c := v1alpha1.ContainerRecreateRequestContainer{Name: "app", PreStop: execHook(tc.cmd)}
			start := time.Now()
			if err := r.stop(t.Context(), crr, pod, c, &Container{ID: rt.containers["app"][0].Id, Running: true}); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			t.Logf("stop took %s; ExecSync timeouts %v; stopped with grace %v", took, rt.execs, rt.graces)
			if took < tc.least || took > tc.most {
				t.Errorf("stop took %s, want %s to %s", took, tc.least, tc.most)
			}
			if len(rt.execs) != 1 || rt.execs[0] != tc.wantTimeout {
				t.Errorf("ExecSync timeouts %v, want [%s]", rt.execs, tc.wantTimeout)
			}
			if len(rt.graces) != 1 || rt.graces[0] < tc.wantGraceMin || rt.graces[0] > tc.grace {
				t.Errorf("stopped with grace %v, want %d to %d", rt.graces, tc.wantGraceMin, tc.grace)
			}
		})
	}
}

// An httpGet hook that never answers is cut at the cap by its request's context.
func TestPreStopHTTPCutAtTheCap(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-req.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	r, rt, _, crr := setup(t, nil, "app")
	r.MaxPreStop = 200 * time.Millisecond
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{PodIP: host}}
	c := v1alpha1.ContainerRecreateRequestContainer{Name: "app", PreStop: &v1alpha1.ContainerRecreateRequestPreStop{
		HTTPGet: &v1alpha1.ContainerRecreateRequestHTTPGetAction{Path: "/stop", Port: intstr.FromInt(p)}}}
	start := time.Now()
	if err := r.stop(t.Context(), crr, pod, c, &Container{ID: rt.containers["app"][0].Id, Running: true}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > time.Second {
		t.Errorf("stop took %s, want the 200ms cap", took)
	}
	if len(rt.graces) != 1 || rt.graces[0] != 29 {
		t.Errorf("stopped with grace %v, want the 29 s left of 30", rt.graces)
	}
}

// fakeRequests serves requests from a client and hands the informer's handler to the test.
type fakeRequests struct {
	client.Reader
	handlers chan toolscache.ResourceEventHandler
}

func (f *fakeRequests) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return &fakeInformer{handlers: f.handlers}, nil
}

type fakeInformer struct {
	cache.Informer
	handlers chan toolscache.ResourceEventHandler
}

func (f *fakeInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	f.handlers <- h
	return nil, nil
}

func (f *fakeInformer) RemoveEventHandler(toolscache.ResourceEventHandlerRegistration) error {
	return nil
}

// While one request's preStop hook hangs (grace 30 s, no cap), another pod's request is carried
// out at once; Run stops, cutting the hook, when its context ends.
func TestHangingHookDoesNotStallOtherRequests(t *testing.T) {
	r, rt, c, hung := setup(t, nil, "stuck")
	r.Workers, r.Poll = 2, 50*time.Millisecond
	ctx := t.Context()
	if err := c.Get(ctx, client.ObjectKeyFromObject(hung), hung); err != nil {
		t.Fatal(err)
	}
	hung.Spec.Containers[0].PreStop = execHook("hang")
	if err := c.Update(ctx, hung); err != nil {
		t.Fatal(err)
	}
	rt.start("other")
	pod2 := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p2", UID: "uid2"}}
	other := &v1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r2",
		Labels: map[string]string{v1alpha1.ContainerRecreateRequestPodUIDKey: "uid2"}},
		Spec: v1alpha1.ContainerRecreateRequestSpec{PodName: "p2", Containers: []v1alpha1.ContainerRecreateRequestContainer{{Name: "other",
			PreStop:       execHook("true"),
			StatusContext: &v1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://" + rt.containers["other"][0].Id}}}}}
	for _, o := range []client.Object{pod2, other} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	reqs := &fakeRequests{Reader: c, handlers: make(chan toolscache.ResourceEventHandler, 1)}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx, reqs) }()
	h := <-reqs.handlers
	h.OnAdd(hung, false)
	waitUntil(t, "the first hook runs", func() bool { rt.mu.Lock(); defer rt.mu.Unlock(); return len(rt.execs) == 1 })
	start := time.Now()
	h.OnAdd(other, false)
	waitUntil(t, "the other request's container is stopped", func() bool { return slices.Contains(rt.stopped(), "other") })
	if took := time.Since(start); took > time.Second {
		t.Errorf("the other request took %s behind the hanging hook", took)
	}
	got := &v1alpha1.ContainerRecreateRequest{}
	waitUntil(t, "the other request's status reports the stop", func() bool {
		return c.Get(ctx, client.ObjectKeyFromObject(other), got) == nil && len(got.Status.ContainerRecreateStates) == 1 &&
			got.Status.ContainerRecreateStates[0].IsKilled
	})
	if slices.Contains(rt.stopped(), "stuck") {
		t.Error("the container whose hook hangs was stopped before its hook ended")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("not within 5s: %s", what)
}
