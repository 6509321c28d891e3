package cachetrim

import (
	"errors"
	"reflect"
	"strconv"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/json"
	toolscache "k8s.io/client-go/tools/cache"
)

// decoded is pod as a decoder leaves it: every string a copy of its own.
func decoded(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	b, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	out := &corev1.Pod{}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func samePointer(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func testPod(name, ip string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "web", "id": name},
			Annotations:     map[string]string{"apps.kruise.io/inplace-update-state": `{"revision":"` + name + `"}`},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web", UID: "u-1"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kruise-manager"}}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "registry.local/app:v1",
			VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access-" + name, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}}},
			Volumes: []corev1.Volume{{Name: "kube-api-access-" + name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
					Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}}}}}}},
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, Conditions: []corev1.PodCondition{{Type: "KruisePodReady", Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "registry.local/app:v1", ImageID: "sha256:abc", ContainerID: "containerd://" + name}}},
	}
}

// The transform strips managed fields first, then shares the strings two pods of a workload have
// in common, and changes nothing a reader sees.
func TestTransformSharesStringsAndKeepsContent(t *testing.T) {
	var pool Pool
	strip := func(obj any) (any, error) {
		obj.(*corev1.Pod).ManagedFields = nil
		return obj, nil
	}
	tr := pool.Then(strip)
	var out []*corev1.Pod
	for _, n := range []string{"web-a", "web-b"} {
		want := testPod(n, "10.0.0."+n[len(n)-1:])
		want.ManagedFields = nil
		got, err := tr(decoded(t, testPod(n, "10.0.0."+n[len(n)-1:])))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("transform changed %s:\n got %+v\nwant %+v", n, got, want)
		}
		out = append(out, got.(*corev1.Pod))
	}
	a, b := out[0], out[1]
	shared := map[string][2]string{
		"namespace":          {a.Namespace, b.Namespace},
		"image":              {a.Spec.Containers[0].Image, b.Spec.Containers[0].Image},
		"mount path":         {a.Spec.Containers[0].VolumeMounts[0].MountPath, b.Spec.Containers[0].VolumeMounts[0].MountPath},
		"toleration key":     {a.Spec.Tolerations[0].Key, b.Spec.Tolerations[0].Key},
		"owner name":         {a.OwnerReferences[0].Name, b.OwnerReferences[0].Name},
		"condition type":     {string(a.Status.Conditions[0].Type), string(b.Status.Conditions[0].Type)},
		"status image id":    {a.Status.ContainerStatuses[0].ImageID, b.Status.ContainerStatuses[0].ImageID},
		"config map":         {a.Spec.Volumes[0].Projected.Sources[0].ConfigMap.Name, b.Spec.Volumes[0].Projected.Sources[0].ConfigMap.Name},
		"label value":        {a.Labels["app"], b.Labels["app"]},
		"node name":          {a.Spec.NodeName, b.Spec.NodeName},
		"phase":              {string(a.Status.Phase), string(b.Status.Phase)},
		"toleration effect":  {string(a.Spec.Tolerations[0].Effect), string(b.Spec.Tolerations[0].Effect)},
		"readiness of state": {string(a.Status.Conditions[0].Status), string(b.Status.Conditions[0].Status)},
	}
	for what, pair := range shared {
		if !samePointer(pair[0], pair[1]) {
			t.Errorf("%s %q not shared", what, pair[0])
		}
	}
	if !samePointer(keyOf(a.Labels, "app"), keyOf(b.Labels, "app")) {
		t.Errorf("label key %q not shared", "app")
	}
}

// keyOf is m's own copy of the key want.
func keyOf(m map[string]string, want string) string {
	for k := range m {
		if k == want {
			return k
		}
	}
	return ""
}

// Objects of other kinds pass through; a failing first transform stops there.
func TestTransformOtherKinds(t *testing.T) {
	var pool Pool
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	got, err := pool.Then(nil)(node)
	if err != nil || got != runtime.Object(node) {
		t.Fatalf("node: %v, %v", got, err)
	}
	tombstone := toolscache.DeletedFinalStateUnknown{Key: "ns/p"}
	if _, err := pool.Then(nil)(tombstone); err != nil {
		t.Fatal(err)
	}
	failing := func(obj any) (any, error) { return obj, errors.New("refused") }
	if _, err := pool.Then(failing)(testPod("web-a", "10.0.0.1")); err == nil || len(pool.strings) != 0 {
		t.Fatalf("after a failing first transform: err %v, %d strings interned", err, len(pool.strings))
	}
}

// The pool starts afresh at maxInterned strings rather than growing without bound.
func TestPoolIsBounded(t *testing.T) {
	var pool Pool
	for i := range maxInterned + 10 {
		pool.Intern("s" + strconv.Itoa(i))
	}
	if n := len(pool.strings); n > maxInterned {
		t.Fatalf("%d strings held", n)
	}
	if pool.Intern("") != "" {
		t.Fatal("empty string")
	}
}
