package engine

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// recorder is a pod writer that keeps each request as "path body".
type recorder struct {
	mu   sync.Mutex
	reqs []string
}

func (r *recorder) engine(t *testing.T, pods []*corev1.Pod, policy inplace.KubeletPolicy) *engine {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, req.URL.Path+" "+string(body))
		r.mu.Unlock()
		_, _ = io.WriteString(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}`)
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder()
	for _, p := range pods {
		b = b.WithObjects(p)
	}
	return New(b.Build(), nil, inplace.Options{}, WithPodWriter(cs.CoreV1().RESTClient()),
		WithKubelets(NewKubelets(nil, nil, policy))).(*engine)
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}

// servingPod is a pod with the InPlaceUpdateReady gate, True, serving on node n1.
func servingPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-p"},
		Spec: corev1.PodSpec{NodeName: "n1", ReadinessGates: []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}},
			Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "app:1", ImageID: "app@1",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
}

// On a node whose kubelet reports a gate's change (or is not heard from yet), the engine writes the
// gate alone and leaves Ready to the kubelet; on a node whose kubelet does not, it writes Ready
// False itself in the same write.
func TestUnreadyLeavesReadyToAKubeletThatAnswers(t *testing.T) {
	ctx := context.Background()
	var r recorder
	e := r.engine(t, nil, inplace.DefaultKubeletPolicy())
	held, err := e.Unready(ctx, servingPod(), UpdateOptions{Reason: "rollout"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := r.requests()
	if len(reqs) != 1 || strings.Contains(reqs[0], `"type":"Ready"`) || !strings.Contains(reqs[0], `"type":"InPlaceUpdateReady","status":"False"`) {
		t.Fatalf("a node not heard from: writes %q, want the gate alone", reqs)
	}
	if !inplace.GateFalse(held) || !inplace.ConditionIs(held, corev1.PodReady, corev1.ConditionTrue) {
		t.Errorf("held %+v, want the gate False and Ready as the kubelet left it", held.Status.Conditions)
	}
	e.kubelets.Record(ctx, "n1", inplace.WaitDecision{Wait: true, Probe: true}, nil, true, "ns/p", time.Now())
	if held, err = e.Unready(ctx, servingPod(), UpdateOptions{Reason: "rollout"}); err != nil {
		t.Fatal(err)
	}
	if reqs = r.requests(); len(reqs) != 2 || !strings.Contains(reqs[1], `"type":"Ready","status":"False"`) || inplace.ConditionIs(held, corev1.PodReady, corev1.ConditionTrue) {
		t.Fatalf("a silent node: writes %q, held %+v, want the gate and Ready False together", reqs, held.Status.Conditions)
	}
	// A deferred update (gracePeriodSeconds) runs its period out of service, whatever the node.
	var g recorder
	e = g.engine(t, nil, inplace.DefaultKubeletPolicy())
	if _, err := e.Unready(ctx, servingPod(), UpdateOptions{Reason: "rollout", GraceSeconds: 5}); err != nil {
		t.Fatal(err)
	}
	if reqs = g.requests(); len(reqs) != 1 || !strings.Contains(reqs[0], `"type":"Ready","status":"False"`) {
		t.Fatalf("with a grace period: writes %q, want Ready False with the gate", reqs)
	}
}

// A kubelet that lets its wait run out did not take the pod out of its Services: the engine writes
// Ready False before it changes the containers.
func TestUpdateAllTakesOutWhatTheKubeletDidNot(t *testing.T) {
	var r recorder
	p := inplace.DefaultKubeletPolicy()
	p.Probe = 100 * time.Millisecond
	pod := servingPod()
	e := r.engine(t, []*corev1.Pod{pod}, p)
	spec := &inplace.UpdateSpec{Revision: "r2", ContainerImages: map[string]string{"app": "app:2"}}
	var errs []error
	e.UpdateAll(context.Background(), []BatchUpdate{{Pod: pod, Spec: spec}}, 1, func(_ int, err error) { errs = append(errs, err) })
	reqs := r.requests()
	if len(errs) != 1 || errs[0] != nil || len(reqs) != 3 {
		t.Fatalf("writes %q (%v), want the gate, Ready False, the spec", reqs, errs)
	}
	if strings.Contains(reqs[0], `"type":"Ready"`) || !strings.HasSuffix(strings.Fields(reqs[1])[0], "/status") ||
		!strings.Contains(reqs[1], `"type":"Ready","status":"False"`) || strings.Contains(reqs[1], "InPlaceUpdateReady") ||
		strings.HasSuffix(strings.Fields(reqs[2])[0], "/status") {
		t.Fatalf("writes %q, want the gate alone, then Ready False alone, then the spec", reqs)
	}
}
