package defaulting

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kruise-ng/kruise/pkg/webhook/internal/webhookfuzz"
)

// Hand-written seeds beside the generic ones (a minimal object of each kind, truncated, wrong
// types): objects that reach the defaulting functions' deeper paths.
var fuzzSamples = []string{
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","metadata":{"name":"cs","namespace":"ns"},
	  "spec":{"replicas":3,"selector":{"matchLabels":{"app":"a"}},
	    "template":{"metadata":{"labels":{"app":"a"}},"spec":{"hostNetwork":true,"containers":[{"name":"app","image":"app:v1","ports":[{"containerPort":80}]}]}},
	    "volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"resources":{"requests":{"storage":"1Gi"}}}}],
	    "updateStrategy":{"type":"InPlaceIfPossible","maxUnavailable":"20%","partition":"50%"}}}`,
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"ContainerRecreateRequest","metadata":{"name":"r","namespace":"ns"},
	  "spec":{"podName":"p","containers":[{"name":"app"}],"strategy":{"unreadyGracePeriodSeconds":3}}}`,
	`{"apiVersion":"apps.kruise.io/v1beta1","kind":"ImagePullJob","metadata":{"name":"j","namespace":"ns"},
	  "spec":{"image":"app:v2","parallelism":"50%","completionPolicy":{"type":"Always"}}}`,
	`{"apiVersion":"apps.kruise.io/v1beta1","kind":"ImageListPullJob","metadata":{"name":"j","namespace":"ns"},
	  "spec":{"images":["app:v1","app:v2"],"pullPolicy":{"timeoutSeconds":60}}}`,
	`{"apiVersion":"apps.kruise.io/v1beta1","kind":"StatefulSet","metadata":{"name":"s","namespace":"ns"},
	  "spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"spec":{"containers":[{"name":"c","image":"i"}]}},
	    "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"200%"}}}}`,
}

// Every defaulting webhook Register serves answers any object without panicking, with an allowed
// answer and a patch that applies to the object, or a refusal with an HTTP error code.
func FuzzDefaultingWebhooks(f *testing.F) {
	scheme := webhookfuzz.NewScheme(f)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid"},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Ports: []corev1.ContainerPort{{ContainerPort: 80}},
			Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/drain"}}}}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "containerd://c1"}}}}
	pods := fake.NewClientBuilder().WithObjects(pod).Build()
	targets := webhookfuzz.Targets(f, scheme, func(srv webhook.Server) {
		Register(srv, scheme, pods, Options{TemplateDefaults: true, HostNetworkHostPorts: true})
	})
	webhookfuzz.Seed(f, targets, fuzzSamples...)
	f.Fuzz(func(t *testing.T, path string, update bool, obj, old []byte) {
		webhookfuzz.Check(t, targets, path, update, obj, old)
	})
}
