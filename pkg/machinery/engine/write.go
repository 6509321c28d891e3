package engine

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WithPodWriter makes the engine write its pod patches through pods, a REST client of the core
// API group (kubernetes.Interface.CoreV1().RESTClient()), without decoding the API server's
// answer: nothing reads it, and decoding every pod the API server answered with was an eighth of
// the manager's CPU in a 10,000-pod in-place rollout. Without it the engine's client writes.
func WithPodWriter(pods rest.Interface) Option {
	return func(e *engine) { e.pods = pods }
}

// patch writes body to pod, or to its subresource when given (status, resize).
func (e *engine) patch(ctx context.Context, pod *corev1.Pod, subresource string, pt types.PatchType, body []byte) error {
	if e.pods != nil {
		req := e.pods.Patch(pt).Namespace(pod.Namespace).Resource("pods").Name(pod.Name)
		if subresource != "" {
			req = req.SubResource(subresource)
		}
		return req.Body(body).Do(ctx).Error()
	}
	if subresource != "" {
		return e.client.SubResource(subresource).Patch(ctx, Ref(pod), client.RawPatch(pt, body))
	}
	return e.client.Patch(ctx, Ref(pod), client.RawPatch(pt, body))
}
