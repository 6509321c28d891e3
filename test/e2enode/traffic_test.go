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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/inplace"
	"github.com/kruise-ng/kruise/pkg/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// sample is one observation, from a watch, with when it arrived.
type sample struct {
	at  time.Time
	pod string // a pod event: the pod; an EndpointSlice event: the pod of the endpoint's IP
	// a pod event: its gate, its app container's restarts and whether that container runs
	gateFalse bool
	restarts  int32
	running   bool
	// an EndpointSlice event: whether the pod's endpoint is ready
	endpoint, ready bool
}

// noTrafficDuringRestart rolls a 20-pod CloneSet behind a Service from app:v1 to app:v2 in place
// (20 in-place updates, 5 at a time), watching the pods and the Service's EndpointSlices: in each
// update, once the pod's endpoint went not ready after its gate went False, no sample shows it
// ready again before the new container runs, and it went not ready before then. The engine changes
// a container only once the kubelet has reported the pod not Ready, so the kubelet cannot write
// Ready True from an older copy of the pod while the container restarts. (One pod flipped between
// two images 20 times would meet the kubelet's restart back-off, which keys on the container's
// spec hash.)
func noTrafficDuringRestart(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 20
	ns := harness.Namespace(t, cs)
	pod := realPod("app", sb.Image("app:v1")).Spec
	pod.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	clone := harness.NewCloneSet(ns, "traffic", n, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, pod)
	clone.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(5))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "traffic"},
		Spec: corev1.ServiceSpec{Selector: clone.Spec.Selector.MatchLabels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 3*time.Minute, ns, "traffic", "ready on v1", harness.RolledOut(n))
	before := listPods(t, cs, ns)
	byIP := map[string]string{}
	for name, p := range before {
		byIP[p.Status.PodIP] = name
		waitEndpoint(t, cs, ns, "traffic", p.Status.PodIP, true, "ready on v1")
	}

	var (
		mu      sync.Mutex
		samples []sample
	)
	record := func(s sample) {
		mu.Lock()
		samples = append(samples, s)
		mu.Unlock()
	}
	podWatch, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
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
				record(sample{at: time.Now(), pod: x.Name, gateFalse: inplace.ConditionIs(x, appspub.InPlaceUpdateReady, corev1.ConditionFalse),
					restarts: st.RestartCount, running: st.State.Running != nil})
			}
		}
	}()
	go func() {
		for ev := range sliceWatch.ResultChan() {
			s, ok := ev.Object.(*discoveryv1.EndpointSlice)
			if !ok {
				continue
			}
			at := time.Now()
			for ip, name := range byIP {
				if ready, found := sliceEndpointReady(s, ip); found {
					record(sample{at: at, pod: name, endpoint: true, ready: ready})
				}
			}
		}
	}()

	start := time.Now()
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q,"ports":[{"name":"http","containerPort":8080}]}]}}}}`, sb.Image("app:v2"))
	if err := c.Patch(ctx, clone, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	harness.WaitCloneSet(t, c, 3*time.Minute, ns, "traffic", "rolled out to v2", harness.RolledOut(n))
	harness.CheckUpdatedInPlace(t, before, listPods(t, cs, ns), n)
	mu.Lock()
	defer mu.Unlock()
	var slowest time.Duration
	checked := 0
	for name, p := range before {
		var own []sample
		for _, s := range samples {
			if s.pod == name && !s.at.Before(start) {
				own = append(own, s)
			}
		}
		lead, err := checkNoTraffic(own, p.Status.ContainerStatuses[0].RestartCount)
		if err != nil {
			t.Errorf("pod %s: %v", name, err)
			continue
		}
		checked++
		if checked == 1 || lead < slowest {
			slowest = lead
		}
	}
	t.Logf("%d in-place updates: each endpoint went not ready before the new container ran (the closest %s before), never ready again in between",
		checked, slowest.Round(time.Millisecond))
}

// checkNoTraffic reads one pod's samples of its update (its container had restarted restarts
// times before): between the gate going False and the new container running, once the endpoint
// went not ready it stays so, and it went not ready before the container ran. It returns how long
// before the container ran the endpoint went not ready.
func checkNoTraffic(samples []sample, restarts int32) (time.Duration, error) {
	var gateAt, runAt, outAt time.Time
	for _, s := range samples {
		switch {
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
		case !s.ready && outAt.IsZero():
			outAt = s.at
		case s.ready && !outAt.IsZero():
			return 0, fmt.Errorf("the endpoint was ready again %s after it went not ready, %s before the new container ran",
				s.at.Sub(outAt).Round(time.Millisecond), runAt.Sub(s.at).Round(time.Millisecond))
		}
	}
	if outAt.IsZero() {
		return 0, fmt.Errorf("the new container ran %s after the gate went False, the endpoint never seen not ready", runAt.Sub(gateAt).Round(time.Millisecond))
	}
	return runAt.Sub(outAt), nil
}
