package podcontrol

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ToController enqueues a pod's controller by group and kind, as Owns does: Kruise's
// StatefulSet is not apps/v1's, and an owner that is not the controller is not enqueued.
func TestToController(t *testing.T) {
	kruiseSet := schema.GroupKind{Group: "apps.kruise.io", Kind: "StatefulSet"}
	pod := func(refs ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", OwnerReferences: refs}}
	}
	ref := func(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(name), Controller: &controller}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"its controller", pod(ref("apps.kruise.io/v1beta1", "StatefulSet", "web", true)), "ns/web"},
		{"another version of the group", pod(ref("apps.kruise.io/v1alpha1", "StatefulSet", "web", true)), "ns/web"},
		{"apps/v1's StatefulSet", pod(ref("apps/v1", "StatefulSet", "web", true)), ""},
		{"a core kind of the same name", pod(ref("v1", "StatefulSet", "web", true)), ""},
		{"an owner that is not the controller", pod(ref("apps.kruise.io/v1beta1", "StatefulSet", "web", false)), ""},
		{"no owner", pod(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			ToController(kruiseSet).Create(context.Background(), event.CreateEvent{Object: tc.pod}, q)
			got := ""
			if q.Len() > 0 {
				req, _ := q.Get()
				got = req.String()
			}
			if got != tc.want {
				t.Errorf("enqueued %q, want %q", got, tc.want)
			}
		})
	}
}
