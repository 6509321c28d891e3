package inplace_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

func Example() {
	oldT := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "track": "stable"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "app",
			Image: "registry.example/app:1.0",
			Env: []corev1.EnvVar{{Name: "TRACK", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['track']"}}}},
		}}},
	}

	// A new image and a new label value: both can change on the live pod.
	newT := oldT.DeepCopy()
	newT.Spec.Containers[0].Image = "registry.example/app:1.1"
	newT.Labels["track"] = "canary"
	d := inplace.Plan(oldT, newT, "web-7d9f", inplace.Options{})
	fmt.Println("in place:", d.InPlace())
	fmt.Println("images:", d.Spec.ContainerImages)
	fmt.Println("track label:", *d.Spec.Labels["track"])
	fmt.Println("restart for env:", d.Spec.EnvFromMetadataContainers)

	// A new command cannot: the pod must be recreated.
	newT.Spec.Containers[0].Command = []string{"/app", "--debug"}
	d = inplace.Plan(oldT, newT, "web-8c1e", inplace.Options{})
	fmt.Println("in place:", d.InPlace(), d.RecreateReasons)
	// Output:
	// in place: true
	// images: map[app:registry.example/app:1.1]
	// track label: canary
	// restart for env: [app]
	// in place: false [spec.containers[app].command changed]
}
