package sidecarrules

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

var testNow = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// appPod is a pod of app=web in namespace ns with one app container "app".
func appPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}
}

// newSet is a SidecarSet selecting app=web with the given containers, defaulted as stored.
func newSet(name string, containers ...v1beta1.SidecarSetContainer) *v1beta1.SidecarSet {
	for i := range containers {
		if containers[i].PodInjectPolicy == "" {
			containers[i].PodInjectPolicy = v1beta1.SidecarSetBeforeAppContainer
		}
	}
	return &v1beta1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1beta1.SidecarSetSpec{
			Selector:   &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Containers: containers,
		},
	}
}

func injectedEnv() corev1.EnvVar { return corev1.EnvVar{Name: InjectedEnv, Value: "true"} }

// injectedContainer is the pod container a plain sidecar c becomes.
func injectedContainer(c v1beta1.SidecarSetContainer, extraEnv ...corev1.EnvVar) corev1.Container {
	out := *c.Container.DeepCopy()
	out.Env = append(out.Env, injectedEnv())
	out.Env = append(out.Env, extraEnv...)
	return out
}

func after(c v1beta1.SidecarSetContainer) v1beta1.SidecarSetContainer {
	c.PodInjectPolicy = v1beta1.SidecarSetAfterAppContainer
	return c
}

func names(cs []corev1.Container) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }
