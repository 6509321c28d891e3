package revision

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var cloneSetGVK = schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}

func testOwner() *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Name: "web", Namespace: "prod", UID: types.UID("0b6f-uid")}
}

// baseTemplate is a template exercising maps, quantities, int64s and nested structs.
func baseTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"example.com/owner": "team-a"},
		},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{"disk": "ssd"},
			TerminationGracePeriodSeconds: ptr.To[int64](45),
			SecurityContext:               &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](9007199254740993)},
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "registry.example/app:1.0",
				Args:  []string{"--port=8080", "<&>"},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"),
						corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
			}},
		},
	}
}

func claimTemplates() []corev1.PersistentVolumeClaim {
	return []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}}
}

func mustNew(t *testing.T, in Input, rev int64, collisionCount *int32) *appsv1.ControllerRevision {
	t.Helper()
	r, err := New(testOwner(), cloneSetGVK, in, rev, collisionCount)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// withImage returns an Input of baseTemplate with the app image set to image.
func withImage(image string) Input {
	tpl := baseTemplate()
	tpl.Spec.Containers[0].Image = image
	return Input{Template: tpl}
}

// rawRevision is a revision with the given name, number and raw Data.
func rawRevision(name string, number int64, data string) *appsv1.ControllerRevision {
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "prod"},
		Data:       runtime.RawExtension{Raw: []byte(data)},
		Revision:   number,
	}
}

func names(revs []*appsv1.ControllerRevision) []string {
	out := []string{}
	for _, r := range revs {
		out = append(out, r.Name)
	}
	return out
}

// outcome is what a Decision says, for table tests of Select and Choose.
type outcome struct {
	create, renumber, bump bool
	name                   string // of Update
	number                 int64  // of Update
	collisionCount         int32
}

// outcomeOf is d's outcome.
func outcomeOf(d Decision) outcome {
	return outcome{create: d.Create, renumber: d.Renumber, bump: d.CollisionCountBump,
		name: d.Update.Name, number: d.Update.Revision, collisionCount: d.CollisionCount}
}
