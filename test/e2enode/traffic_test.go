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
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
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
	notReady  bool // the pod's Ready condition is False
	// an EndpointSlice event: whether the pod's endpoint is ready
	endpoint, ready bool
}

// noTrafficDuringRestart rolls a 20-pod CloneSet behind a Service from app:v1 to app:v2 in place
// (20 in-place updates, 5 at a time), watching the pods and the Service's EndpointSlices. In each
// update the kubelet wrote the pod's Ready False while the old container still ran (the engine
// changes a container only once the kubelet has reported the pod not Ready, so the kubelet cannot
// write Ready True from an older copy of the pod while the container restarts), and once the
// pod's endpoint went not ready no sample shows it ready again before the new container runs.
// Whether the endpoint also went out before the restart depends on the EndpointSlice controller
// keeping up with the kubelet; it is counted, not required: a grace period is what guarantees it
// (gracePeriodEndpoint). (One pod flipped between two images 20 times would meet the kubelet's
// restart back-off, which keys on the container's spec hash.)
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
					restarts: st.RestartCount, running: st.State.Running != nil, notReady: inplace.ConditionIs(x, corev1.PodReady, corev1.ConditionFalse)})
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
	checked, outFirst := 0, 0
	for name, p := range before {
		var own []sample
		for _, s := range samples {
			if s.pod == name && !s.at.Before(start) {
				own = append(own, s)
			}
		}
		v, err := checkNoTraffic(own, p.Status.ContainerStatuses[0].RestartCount)
		if err != nil {
			t.Errorf("pod %s: %v", name, err)
			continue
		}
		checked++
		if v.endpointOut {
			outFirst++
		}
		if checked == 1 || v.lead < slowest {
			slowest = v.lead
		}
	}
	t.Logf("%d in-place updates: the kubelet wrote Ready False before each new container ran (the closest %s before), no endpoint ready again in between; "+
		"%d endpoints went not ready before their container ran (the others: the EndpointSlice controller was slower than the restart)",
		checked, slowest.Round(time.Millisecond), outFirst)
}

// verdict is what one pod's update showed: how long before the new container ran the kubelet
// wrote Ready False, and whether the endpoint went not ready before then.
type verdict struct {
	lead        time.Duration
	endpointOut bool
}

// checkNoTraffic reads one pod's samples of its update (its container had restarted restarts
// times before): after the gate went False the kubelet wrote Ready False while the old container
// still ran, and between the gate going False and the new container running, once the endpoint
// went not ready it stays so.
func checkNoTraffic(samples []sample, restarts int32) (verdict, error) {
	var gateAt, notReadyAt, runAt, outAt time.Time
	for _, s := range samples {
		switch {
		case s.endpoint:
		case s.gateFalse && gateAt.IsZero():
			gateAt = s.at
			if s.notReady && s.running && s.restarts == restarts {
				notReadyAt = s.at
			}
		case !gateAt.IsZero() && notReadyAt.IsZero() && s.notReady && s.running && s.restarts == restarts:
			notReadyAt = s.at
		case s.restarts > restarts && s.running && runAt.IsZero():
			runAt = s.at
		}
	}
	if gateAt.IsZero() || runAt.IsZero() {
		return verdict{}, fmt.Errorf("no gate False (%v) or no new container running (%v) seen", gateAt, runAt)
	}
	if notReadyAt.IsZero() || notReadyAt.After(runAt) {
		return verdict{}, fmt.Errorf("the new container ran %s after the gate went False, the pod never seen not Ready while the old container ran",
			runAt.Sub(gateAt).Round(time.Millisecond))
	}
	for _, s := range samples {
		if !s.endpoint || s.at.Before(gateAt) || s.at.After(runAt) {
			continue
		}
		switch {
		case !s.ready && outAt.IsZero():
			outAt = s.at
		case s.ready && !outAt.IsZero():
			return verdict{}, fmt.Errorf("the endpoint was ready again %s after it went not ready, %s before the new container ran",
				s.at.Sub(outAt).Round(time.Millisecond), runAt.Sub(s.at).Round(time.Millisecond))
		}
	}
	return verdict{lead: runAt.Sub(notReadyAt), endpointOut: !outAt.IsZero()}, nil
}
