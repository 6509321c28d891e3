package cloneset

import (
	"context"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// writeLog records the writes a reconcile makes through a fake client: every create, delete and
// patch, each as its verb (and subresource) and, for a pod, its name.
type writeLog struct {
	mu     sync.Mutex
	all    int
	onPods []string
}

func (w *writeLog) record(obj client.Object, what string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all++
	if _, ok := obj.(*corev1.Pod); ok {
		w.onPods = append(w.onPods, what)
	}
}

// total is how many writes were made, to any object.
func (w *writeLog) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all
}

// pods lists the writes to pods in order: "create", "delete", "patch" or "patch status" (with the
// patch body, so a failure shows what was written).
func (w *writeLog) pods() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.onPods, ", ")
}

func (w *writeLog) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			w.record(obj, "create "+obj.GetName())
			return c.Create(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			w.record(obj, "delete "+obj.GetName())
			return c.Delete(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			w.record(obj, "patch")
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			body, _ := patch.Data(obj)
			w.record(obj, "patch "+sub+string(body))
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}
}
