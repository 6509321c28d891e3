package e2enode

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/inplace"
	"github.com/kruise-ng/kruise/pkg/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// sample is one observation, from a watch, with when it arrived.
type sample struct {
	at time.Time
	// a pod event: its gate, its app container's restarts and whether that container runs
	gateFalse bool
	restarts  int32
	running   bool
	// an EndpointSlice event: whether the pod's endpoint is ready (found: listed at all)
	endpoint, ready, found bool
}

// noTrafficDuringRestart rolls a one-pod CloneSet behind a Service between app:v1 and app:v2 in
// place 20 times, watching the pod and the Service's EndpointSlices: in each update, once the
// endpoint went not ready after the gate went False, no sample shows it ready again before the new
// container runs, and it went not ready before then. The engine changes the container only once
// the kubelet has reported the pod not Ready, so the kubelet cannot write Ready True from an older
// copy of the pod while the container restarts.
func noTrafficDuringRestart(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := harness.Namespace(t, cs)
	pod := realPod("app", sb.Image("app:v1")).Spec
	pod.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	clone := harness.NewCloneSet(ns, "traffic", 1, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, pod)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "traffic"},
		Spec: corev1.ServiceSpec{Selector: clone.Spec.Selector.MatchLabels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 90*time.Second, ns, "traffic", "ready on v1", harness.RolledOut(1))
	var p *corev1.Pod
	for _, x := range listPods(t, cs, ns) {
		p = x
	}
	ip := p.Status.PodIP
	waitEndpoint(t, cs, ns, "traffic", ip, true, "ready on v1")

	var (
		mu      sync.Mutex
		samples []sample
	)
	record := func(s sample) {
		mu.Lock()
		samples = append(samples, s)
		mu.Unlock()
	}
	podWatch, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + p.Name})
	if err != nil {
		t.Fatal(err)
	}
	sliceWatch, err := cs.DiscoveryV1().EndpointSlices(ns).Watch(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=traffic"})
	if err != nil {
		t.Fatal(err)
	}
	defer podWatch.Stop()
	defer sliceWatch.Stop()
	go func() {
		for ev := range podWatch.ResultChan() {
			if x, ok := ev.Object.(*corev1.Pod); ok && len(x.Status.ContainerStatuses) > 0 {
				st := x.Status.ContainerStatuses[0]
				record(sample{at: time.Now(), gateFalse: inplace.ConditionIs(x, appspub.InPlaceUpdateReady, corev1.ConditionFalse),
					restarts: st.RestartCount, running: st.State.Running != nil})
			}
		}
	}()
	go func() {
		for ev := range sliceWatch.ResultChan() {
			if s, ok := ev.Object.(*discoveryv1.EndpointSlice); ok {
				ready, found := sliceEndpointReady(s, ip)
				record(sample{at: time.Now(), endpoint: true, ready: ready, found: found})
			}
		}
	}()

	images := []string{sb.Image("app:v2"), sb.Image("app:v1")}
	var leads []time.Duration
	for i := range 20 {
		restarts := p.Status.ContainerStatuses[0].RestartCount
		start := time.Now()
		patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q,"ports":[{"name":"http","containerPort":8080}]}]}}}}`, images[i%2])
		if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
		harness.WaitCloneSet(t, c, 90*time.Second, ns, "traffic", fmt.Sprintf("update %d rolled out", i+1), harness.RolledOut(1))
		waitEndpoint(t, cs, ns, "traffic", ip, true, fmt.Sprintf("ready after update %d", i+1))
		got, err := cs.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil || got.UID != p.UID {
			t.Fatalf("update %d: pod %v replaced or gone (%v)", i+1, got, err)
		}
		p = got
		mu.Lock()
		lead, err := checkNoTraffic(samples, start, restarts)
		mu.Unlock()
		if err != nil {
			t.Errorf("update %d: %v", i+1, err)
			continue
		}
		leads = append(leads, lead)
	}
	if len(leads) > 0 {
		slowest := leads[0]
		for _, l := range leads {
			slowest = min(slowest, l)
		}
		t.Logf("%d updates: the endpoint went not ready at least %s before the new container ran", len(leads), slowest.Round(time.Millisecond))
	}
}

// checkNoTraffic reads the samples of one update that started at start (the container had
// restarted restarts times): between the gate going False and the new container running, once the
// endpoint went not ready it stays so, and it went not ready before the container ran. It returns
// how long before the container ran the endpoint went not ready.
func checkNoTraffic(samples []sample, start time.Time, restarts int32) (time.Duration, error) {
	var gateAt, runAt, outAt time.Time
	for _, s := range samples {
		switch {
		case s.at.Before(start):
		case !s.endpoint && s.gateFalse && gateAt.IsZero():
			gateAt = s.at
		case !s.endpoint && s.restarts > restarts && s.running && runAt.IsZero():
			runAt = s.at
		}
	}
	if gateAt.IsZero() || runAt.IsZero() {
		return 0, fmt.Errorf("no gate False (%v) or no new container running (%v) seen", gateAt, runAt)
	}
	for _, s := range samples {
		if !s.endpoint || s.at.Before(gateAt) || s.at.After(runAt) {
			continue
		}
		switch {
		case s.found && !s.ready && outAt.IsZero():
			outAt = s.at
		case s.found && s.ready && !outAt.IsZero():
			return 0, fmt.Errorf("the endpoint was ready again %s after it went not ready, %s before the new container ran",
				s.at.Sub(outAt).Round(time.Millisecond), runAt.Sub(s.at).Round(time.Millisecond))
		}
	}
	if outAt.IsZero() {
		return 0, fmt.Errorf("the new container ran %s after the gate went False, the endpoint never seen not ready", runAt.Sub(gateAt).Round(time.Millisecond))
	}
	return runAt.Sub(outAt), nil
}
