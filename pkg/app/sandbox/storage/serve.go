package storage

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
)

// Component is the name the Controller reports its events under.
const Component = "sandbox-storage"

// Serve runs a Controller against the cluster of cfg, with its volumes' folders under root, until
// ctx ends; ready is called once it serves.
func Serve(ctx context.Context, cfg *rest.Config, root string, ready func()) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 100, 200
	cfg.UserAgent = Component
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	events := record.NewBroadcaster(record.WithContext(ctx))
	defer events.Shutdown()
	events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	recorder := events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: Component})
	c, err := New(cs, root, recorder)
	if err != nil {
		return err
	}
	return c.Run(ctx, ready)
}
