package integration

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// podNamespace creates a namespace named from prefix, with its default service account (no
// controller makes it here), for pods the test creates; it returns its name.
func podNamespace(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns.Name).Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func inplacePod(t *testing.T, cs kubernetes.Interface) *corev1.Pod {
	t.Helper()
	ns := podNamespace(t, cs, "inplace-")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, Labels: map[string]string{inplace.RevisionLabel: "rev-1", "tier": "web", "drop": "me"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}, {Name: "side", Image: "side:v1"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}, TerminationGracePeriodSeconds: ptr.To[int64](1),
			NodeName: "node-of-this-test"}, // the test plays its kubelet
	}
	pod, err := cs.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// The spec patch applies the update only to the pod it was planned against: it updates images,
// metadata, revision and state in one write, and is refused as a whole when the pod's image or
// revision changed meanwhile.
func TestInPlaceSpecPatchChecksWhatItReliesOn(t *testing.T) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	pod := inplacePod(t, cs)
	spec := &inplace.UpdateSpec{Revision: "rev-2", ContainerImages: map[string]string{"app": "app:v2"},
		Labels: map[string]*string{"tier": ptr.To("api"), "drop": nil, "new/key": ptr.To("x")}}
	state := &appspub.InPlaceUpdateState{Revision: "rev-2", UpdateTimestamp: metav1.Now(), UpdateImages: true,
		LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"app": {ImageID: "app@sha256:old"}}}

	stale, err := inplace.SpecPatch(pod, spec, state, inplace.Options{}.RevisionLabels(spec.Revision))
	if err != nil {
		t.Fatal(err)
	}
	// Someone else changes the image first: the planned patch must not apply.
	other := []byte(`[{"op":"replace","path":"/spec/containers/0/image","value":"app:hotfix"}]`)
	if _, err := cs.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.JSONPatchType, other, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.JSONPatchType, stale, metav1.PatchOptions{}); err == nil {
		t.Fatal("a patch planned against app:v1 applied over app:hotfix")
	}
	got, _ := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if got.Spec.Containers[0].Image != "app:hotfix" || got.Labels[inplace.RevisionLabel] != "rev-1" || got.Labels["tier"] != "web" {
		t.Fatalf("a refused patch wrote something: image %s labels %v", got.Spec.Containers[0].Image, got.Labels)
	}

	fresh, err := inplace.SpecPatch(got, spec, state, inplace.Options{}.RevisionLabels(spec.Revision))
	if err != nil {
		t.Fatal(err)
	}
	updated, err := cs.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.JSONPatchType, fresh, metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch planned against the current pod: %v", err)
	}
	if updated.Spec.Containers[0].Image != "app:v2" || updated.Spec.Containers[1].Image != "side:v1" {
		t.Errorf("images after the patch: %s, %s", updated.Spec.Containers[0].Image, updated.Spec.Containers[1].Image)
	}
	l := updated.Labels
	if l[inplace.RevisionLabel] != "rev-2" || l["tier"] != "api" || l["new/key"] != "x" {
		t.Errorf("labels after the patch: %v", l)
	}
	if _, ok := l["drop"]; ok {
		t.Errorf("label drop not removed: %v", l)
	}
	var recorded appspub.InPlaceUpdateState
	if err := json.Unmarshal([]byte(updated.Annotations[appspub.InPlaceUpdateStateKey]), &recorded); err != nil || recorded.Revision != "rev-2" ||
		recorded.LastContainerStatuses["app"].ImageID != "app@sha256:old" {
		t.Errorf("state annotation %q (err %v)", updated.Annotations[appspub.InPlaceUpdateStateKey], err)
	}
}

// Condition writes merge with the kubelet's: setting the gate False also sets Ready False and keeps
// the kubelet's other conditions; setting it True leaves Ready to the kubelet.
func TestInPlaceConditionPatchKeepsOtherConditions(t *testing.T) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	pod := inplacePod(t, cs)
	kubelet := []byte(`{"status":{"conditions":[{"type":"ContainersReady","status":"True"},{"type":"Ready","status":"True"},{"type":"InPlaceUpdateReady","status":"True"}]}}`)
	pods := cs.CoreV1().Pods(pod.Namespace)
	if _, err := pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, kubelet, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	down, err := inplace.ConditionPatch(appspub.InPlaceUpdateReady, corev1.ConditionFalse, "StartInPlaceUpdate", "updating app", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got, err := pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, down, metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	want := map[corev1.PodConditionType]corev1.ConditionStatus{"ContainersReady": "True", "Ready": "False", appspub.InPlaceUpdateReady: "False"}
	for typ, st := range want {
		if c := podCondition(got, typ); c == nil || c.Status != st {
			t.Errorf("after gate False: condition %s = %v; want %s (all: %v)", typ, c, st, got.Status.Conditions)
		}
	}
	up, _ := inplace.ConditionPatch(appspub.InPlaceUpdateReady, corev1.ConditionTrue, "", "", time.Now())
	got, err = pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, up, metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if c := podCondition(got, appspub.InPlaceUpdateReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("gate not set True: %v", got.Status.Conditions)
	}
	if c := podCondition(got, corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("setting the gate True must leave Ready to the kubelet: %v", got.Status.Conditions)
	}
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
