package containermeta

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/node/criruntime"
)

func TestMeta(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "side"}, {Name: "missing"}},
		ReadinessGates: []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}}}
	c := func(id, name string, created int64, restarts, hash string) *runtimeapi.Container {
		return &runtimeapi.Container{Id: id, CreatedAt: created, Labels: map[string]string{criruntime.ContainerNameLabel: name},
			Annotations: map[string]string{restartCountAnnotation: restarts, containerHashAnnotation: hash}}
	}
	got := Meta(pod, []*runtimeapi.Container{c("old", "app", 1, "0", "a1"), c("new", "app", 2, "1", "b2"), c("s", "side", 1, "0", "ff")}, "containerd")
	want := []appspub.RuntimeContainerMeta{
		{Name: "app", ContainerID: "containerd://new", RestartCount: 1, Hashes: appspub.RuntimeContainerHashes{PlainHash: 0xb2}},
		{Name: "side", ContainerID: "containerd://s", RestartCount: 0, Hashes: appspub.RuntimeContainerHashes{PlainHash: 0xff}},
	}
	if len(got.Containers) != len(want) {
		t.Fatalf("meta %+v, want %+v", got, want)
	}
	for i := range want {
		if got.Containers[i] != want[i] {
			t.Errorf("container %d: %+v, want %+v", i, got.Containers[i], want[i])
		}
	}
	if !Wanted(pod) {
		t.Error("a pod with the InPlaceUpdateReady gate is not reported")
	}
	if Wanted(&corev1.Pod{}) {
		t.Error("a pod without the gate is reported")
	}
}
