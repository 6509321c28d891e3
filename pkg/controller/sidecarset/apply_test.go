package sidecarset

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// Tests of apply's hot-upgrade writes through a fake API server: the flip, then the upgrade of
// the pod as the flip left it (as OpenKruise's processor flips, then rereads the pod to upgrade).

var apNow = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// apSet is SidecarSet "mesh" with the hot-upgrade sidecar envoy on image at resourceVersion rv.
func apSet(image, rv string) *v1beta1.SidecarSet {
	return &v1beta1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: "mesh", ResourceVersion: rv},
		Spec: v1beta1.SidecarSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Containers: []v1beta1.SidecarSetContainer{{Container: corev1.Container{Name: "envoy", Image: image},
				PodInjectPolicy: v1beta1.SidecarSetBeforeAppContainer,
				UpgradeStrategy: v1beta1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1beta1.SidecarSetHotUpgrade, HotUpgradeEmptyImage: "empty:1"}}},
		},
	}
}

// apRun is pod with the kubelet running every container on its spec image ("id-<image>").
func apRun(pod *corev1.Pod) *corev1.Pod {
	out := pod.DeepCopy()
	out.Status.Phase = corev1.PodRunning
	out.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	var statuses []corev1.ContainerStatus
	for _, c := range out.Spec.Containers {
		statuses = append(statuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "id-" + c.Image, Ready: true})
	}
	out.Status.ContainerStatuses = statuses
	return out
}

// apHandedOver is a pod of v1 hot-upgraded to v2, both copies running: its flip is due.
func apHandedOver(t *testing.T, v1, v2 *v1beta1.SidecarSet) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}
	res, err := sidecarrules.Inject(pod, []*v1beta1.SidecarSet{v1}, sidecarrules.Options{Now: metav1.NewTime(apNow)})
	if err != nil {
		t.Fatal(err)
	}
	up, err := sidecarrules.PlanFullUpgrade(apRun(res.Pod), v2, metav1.NewTime(apNow))
	if err != nil {
		t.Fatal(err)
	}
	return apRun(sidecarrules.Patched(apRun(res.Pod), up))
}

type apHarness struct {
	r      *Reconciler
	pc     *podcontrol.Control
	c      client.Client
	events *events.FakeRecorder
}

func apStart(t *testing.T, pod *corev1.Pod, funcs interceptor.Funcs) *apHarness {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pod.DeepCopy()).WithStatusSubresource(&corev1.Pod{}).
		WithInterceptorFuncs(funcs).Build()
	clk := clocktesting.NewFakeClock(apNow)
	rec := events.NewFakeRecorder(20)
	r := &Reconciler{Client: c, Recorder: rec, Clock: clk, Engine: engine.New(c, clk, inplace.Options{}), expectations: podcontrol.NewExpectations()}
	pc := &podcontrol.Control{Client: c, Clock: clk, Engine: r.Engine, Expectations: r.expectations, Recorder: rec}
	return &apHarness{r: r, pc: pc, c: c, events: rec}
}

func (h *apHarness) pod(t *testing.T) *corev1.Pod {
	t.Helper()
	got := &corev1.Pod{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web-0"}, got); err != nil {
		t.Fatal(err)
	}
	return got
}

func (h *apHarness) eventsSeen() string {
	var out []string
	for {
		select {
		case e := <-h.events.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}

func apImage(pod *corev1.Pod, name string) string {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}

// A finished hot upgrade is flipped in one patch: the old copy gets the empty image, the hash
// entry stays, no condition is written, and an event goes on the pod.
func TestApplyFlip(t *testing.T) {
	v1, v2 := apSet("envoy:1", "10"), apSet("envoy:2", "20")
	pod := apHandedOver(t, v1, v2)
	h := apStart(t, pod, interceptor.Funcs{})
	plan := Compute(v2, []*corev1.Pod{pod}, "mesh-rev", 0)
	if len(plan.Flip) != 1 || len(plan.Upgrade) != 0 {
		t.Fatalf("plan: flip %d, upgrade %d pods; want 1, 0", len(plan.Flip), len(plan.Upgrade))
	}
	if err := h.r.apply(context.Background(), h.pc, podcontrol.Owner{Object: v2}, v2, plan); err != nil {
		t.Fatal(err)
	}
	got := h.pod(t)
	if apImage(got, "envoy-1") != "empty:1" || apImage(got, "envoy-2") != "envoy:2" || apImage(got, "app") != "app:1" {
		t.Errorf("containers after the flip: %+v", got.Spec.Containers)
	}
	for _, k := range []string{sidecarrules.HashAnnotation, sidecarrules.WorkingHotUpgradeContainerAnnotation} {
		if got.Annotations[k] != pod.Annotations[k] {
			t.Errorf("%s changed by the flip: %s, was %s", k, got.Annotations[k], pod.Annotations[k])
		}
	}
	if v := got.Annotations[sidecarrules.VersionAnnotationPrefix+"envoy-1"]; v != "0" {
		t.Errorf("version of envoy-1 = %q, want 0", v)
	}
	if v := got.Annotations[sidecarrules.VersionAltAnnotationPrefix+"envoy-2"]; v != "0" {
		t.Errorf("versionalt of envoy-2 = %q, want 0", v)
	}
	if len(got.Status.Conditions) != 1 {
		t.Errorf("conditions written by the flip: %+v", got.Status.Conditions)
	}
	if _, ok := h.r.expectations.Expected("mesh", "ns/web-0"); !ok {
		t.Errorf("the flip is not awaited in the cache")
	}
	if ev := h.eventsSeen(); !strings.Contains(ev, ReasonFlipped) || !strings.Contains(ev, "envoy-1") {
		t.Errorf("events = %q, want %s naming envoy-1", ev, ReasonFlipped)
	}
}

// A pod both due for a flip and behind the SidecarSet is flipped, then upgraded as flipped: the
// copy just set to the empty image gets the new image and works.
func TestApplyFlipThenUpgrade(t *testing.T) {
	v1, v2, v3 := apSet("envoy:1", "10"), apSet("envoy:2", "20"), apSet("envoy:3", "30")
	pod := apHandedOver(t, v1, v2)
	var patches int
	h := apStart(t, pod, interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		patches++
		return c.Patch(ctx, obj, patch, opts...)
	}})
	plan := Compute(v3, []*corev1.Pod{pod}, "mesh-rev", 0)
	if len(plan.Flip) != 1 || len(plan.Upgrade) != 1 {
		t.Fatalf("plan: flip %d, upgrade %d pods; want 1, 1", len(plan.Flip), len(plan.Upgrade))
	}
	if err := h.r.apply(context.Background(), h.pc, podcontrol.Owner{Object: v3}, v3, plan); err != nil {
		t.Fatal(err)
	}
	if patches != 2 {
		t.Errorf("%d pod patches, want 2 (the flip, the upgrade)", patches)
	}
	got := h.pod(t)
	if apImage(got, "envoy-1") != "envoy:3" || apImage(got, "envoy-2") != "envoy:2" {
		t.Errorf("containers: %+v", got.Spec.Containers)
	}
	if w, _ := sidecarrules.HotUpgradePair(got, "envoy"); w != "envoy-1" {
		t.Errorf("working copy %s, want envoy-1", w)
	}
	want := map[string]string{"version.sidecarset.kruise.io/envoy-1": "30", "versionalt.sidecarset.kruise.io/envoy-1": "20",
		"version.sidecarset.kruise.io/envoy-2": "20", "versionalt.sidecarset.kruise.io/envoy-2": "30"}
	for k, v := range want {
		if got.Annotations[k] != v {
			t.Errorf("%s = %q, want %q", k, got.Annotations[k], v)
		}
	}
	if !sidecarrules.Updated(got, v3) {
		t.Errorf("the pod's hash entry is not v3's: %s", got.Annotations[sidecarrules.HashAnnotation])
	}
	upgradable := corev1.ConditionUnknown
	for _, c := range got.Status.Conditions {
		if c.Type == sidecarrules.UpgradableCondition {
			upgradable = c.Status
		}
	}
	if len(got.Status.Conditions) != 2 || upgradable != corev1.ConditionTrue {
		t.Errorf("conditions = %+v, want %s=True added", got.Status.Conditions, sidecarrules.UpgradableCondition)
	}
}

// When the upgrade after a flip fails, the flip is still awaited in the cache.
func TestApplyFlipKeptWhenTheUpgradeFails(t *testing.T) {
	v1, v2, v3 := apSet("envoy:1", "10"), apSet("envoy:2", "20"), apSet("envoy:3", "30")
	pod := apHandedOver(t, v1, v2)
	var patches int
	h := apStart(t, pod, interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		if patches++; patches == 2 {
			return errors.New("refused")
		}
		return c.Patch(ctx, obj, patch, opts...)
	}})
	plan := Compute(v3, []*corev1.Pod{pod}, "mesh-rev", 0)
	if err := h.r.apply(context.Background(), h.pc, podcontrol.Owner{Object: v3}, v3, plan); err == nil {
		t.Fatal("apply succeeded, want the upgrade's error")
	}
	got := h.pod(t)
	if apImage(got, "envoy-1") != "empty:1" {
		t.Errorf("envoy-1 = %s, want the flip's empty:1", apImage(got, "envoy-1"))
	}
	if _, ok := h.r.expectations.Expected("mesh", "ns/web-0"); !ok {
		t.Fatalf("nothing awaited for the pod")
	}
	// The expectation is the flip's: the pod as written meets it.
	wait, err := h.r.expectations.Pending("mesh", map[string]*corev1.Pod{"ns/web-0": got}, apNow, time.Minute, nil)
	if err != nil || wait {
		t.Errorf("the flipped pod does not meet the expectation (wait %v, %v)", wait, err)
	}
}
