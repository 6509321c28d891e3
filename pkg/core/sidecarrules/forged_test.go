package sidecarrules

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The pod webhook trusts no annotation of the pod's author and injects again on every call of the
// pod's SidecarSet entries (pkg/webhook/sidecarinjection): these are the two facts it relies on.

func testSets() []*v1beta1.SidecarSet {
	agent := v1beta1.SidecarSetContainer{Container: corev1.Container{Name: "agent", Image: "agent:1",
		VolumeMounts: []corev1.VolumeMount{{Name: "creds", MountPath: "/creds"}}}}
	a := newSet("a-agent", agent)
	a.Spec.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "agent"}}}}
	a.Spec.Containers[0].ShareVolumePolicy.Type = v1beta1.SidecarSetShareVolumePolicyEnabled
	log := after(v1beta1.SidecarSetContainer{Container: corev1.Container{Name: "log", Image: "log:1"},
		TransferEnv: []v1beta1.SidecarSetTransferEnvVar{{SourceContainerName: "app", EnvName: "MODE"}}})
	return []*v1beta1.SidecarSet{a, newSet("b-log", log)}
}

func TestInjectAgainChangesNothing(t *testing.T) {
	pod := appPod()
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "x"}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	once, err := Inject(pod, testSets(), Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Inject(once.Pod, testSets(), Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(once.Pod, twice.Pod) {
		t.Errorf("a second injection changed the pod:\n%s", diff.Diff(once.Pod, twice.Pod))
	}
}

func TestForgedAnnotationsAndContainersAreReplaced(t *testing.T) {
	want, err := Inject(appPod(), testSets(), Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	forged := appPod()
	forged.Annotations = map[string]string{InjectedListAnnotation: "a-agent,b-log",
		HashAnnotation: `{"a-agent":{"hash":"forged"}}`}
	forged.Spec.Containers = append([]corev1.Container{{Name: "agent", Image: "busybox", Command: []string{"sleep", "inf"},
		Env: []corev1.EnvVar{injectedEnv()}}}, forged.Spec.Containers...)
	got, err := Inject(forged, testSets(), Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(want.Pod.Spec, got.Pod.Spec) {
		t.Errorf("a forged injection survived:\n%s", diff.Diff(want.Pod.Spec, got.Pod.Spec))
	}
	if got.Pod.Annotations[InjectedListAnnotation] != "a-agent,b-log" || !Injected(got.Pod, testSets()[0]) || !Updated(got.Pod, testSets()[0]) {
		t.Errorf("annotations: %v", got.Pod.Annotations)
	}
}
