package podreadiness

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Holders written by OpenKruise (or anyone) are read from the condition's message; Kruise drops
// only its own once they are over, and writes the list in OpenKruise's form.
func TestReconcileHolders(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	const preDelete = `[{"userAgent":"Lifecycle","key":"preDeleteHook"}]`
	held := func(msg string) []corev1.PodCondition {
		return []corev1.PodCondition{{Type: appspub.KruisePodReadyConditionType, Status: corev1.ConditionFalse, Message: msg}}
	}
	request := func(phase v1alpha1.ContainerRecreateRequestPhase, finalizers ...string) *v1alpha1.ContainerRecreateRequest {
		return &v1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Name: "crr", Namespace: "ns", Finalizers: finalizers},
			Spec: v1alpha1.ContainerRecreateRequestSpec{PodName: "p"}, Status: v1alpha1.ContainerRecreateRequestStatus{Phase: phase}}
	}
	acquired := v1alpha1.ContainerRecreateRequestUnreadyAcquiredKey
	for _, tc := range []struct {
		name        string
		state       appspub.LifecycleStateType
		annotations map[string]string
		conditions  []corev1.PodCondition
		objects     []client.Object
		want        corev1.ConditionStatus
		wantMessage string
	}{
		{name: "OpenKruise's preDelete holder stays while the pod is PreparingDelete", state: appspub.LifecycleStatePreparingDelete,
			conditions: held(preDelete), want: corev1.ConditionFalse, wantMessage: preDelete},
		{name: "the preDelete holder goes once the pod left PreparingDelete", state: appspub.LifecycleStateNormal,
			conditions: held(preDelete), want: corev1.ConditionTrue, wantMessage: "[]"},
		{name: "preUpdate holds through Updating", state: appspub.LifecycleStateUpdating,
			conditions: held(`[{"userAgent":"Lifecycle","key":"preUpdateHook"}]`), want: corev1.ConditionFalse,
			wantMessage: `[{"userAgent":"Lifecycle","key":"preUpdateHook"}]`},
		{name: "another agent's holder is never dropped", state: appspub.LifecycleStateNormal,
			conditions: held(`[{"userAgent":"Lifecycle","key":"preDeleteHook"},{"userAgent":"SidecarSet","key":"x"}]`),
			want:       corev1.ConditionFalse, wantMessage: `[{"userAgent":"SidecarSet","key":"x"}]`},
		{name: "a request OpenKruise acquired holds until it completes", state: appspub.LifecycleStateNormal,
			conditions: held(`[{"userAgent":"ContainerRecreateRequest","key":"ns/crr"}]`),
			objects:    []client.Object{request(v1alpha1.ContainerRecreateRequestRecreating, acquired)},
			want:       corev1.ConditionFalse, wantMessage: `[{"userAgent":"ContainerRecreateRequest","key":"ns/crr"}]`},
		{name: "a completed request releases the pod", state: appspub.LifecycleStateNormal,
			conditions: held(`[{"userAgent":"ContainerRecreateRequest","key":"ns/crr"}]`),
			objects:    []client.Object{request(v1alpha1.ContainerRecreateRequestCompleted, acquired)},
			want:       corev1.ConditionTrue, wantMessage: "[]"},
		{name: "a deleted request releases the pod", state: appspub.LifecycleStateNormal,
			conditions: held(`[{"userAgent":"ContainerRecreateRequest","key":"ns/crr"}]`),
			want:       corev1.ConditionTrue, wantMessage: "[]"},
		{name: "Kruise's request annotation adds its holder beside the lifecycle one", state: appspub.LifecycleStatePreparingDelete,
			annotations: map[string]string{v1alpha1.ContainerRecreateRequestUnreadyPodKey: "crr"},
			conditions:  held(preDelete), objects: []client.Object{request(v1alpha1.ContainerRecreateRequestPending)},
			want:        corev1.ConditionFalse,
			wantMessage: `[{"userAgent":"ContainerRecreateRequest","key":"ns/crr"},{"userAgent":"Lifecycle","key":"preDeleteHook"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", CreationTimestamp: metav1.NewTime(now.Add(-time.Minute)),
					Labels: map[string]string{appspub.LifecycleStateKey: string(tc.state)}, Annotations: tc.annotations},
				Spec:   corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: appspub.KruisePodReadyConditionType}}},
				Status: corev1.PodStatus{Conditions: tc.conditions},
			}
			scheme := runtime.NewScheme()
			if err := clientgoscheme.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			if err := v1alpha1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(tc.objects, pod)...).WithStatusSubresource(pod).Build()
			r := &Reconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(now)}
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "p"}}); err != nil {
				t.Fatal(err)
			}
			got := &corev1.Pod{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), got); err != nil {
				t.Fatal(err)
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == appspub.KruisePodReadyConditionType && (cond.Status != tc.want || cond.Message != tc.wantMessage) {
					t.Errorf("KruisePodReady = %s %q, want %s %q", cond.Status, cond.Message, tc.want, tc.wantMessage)
				}
			}
		})
	}
}
