package podreadiness

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

func TestReconcile(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	gate := []corev1.PodReadinessGate{{ConditionType: appspub.KruisePodReadyConditionType}}
	for _, tc := range []struct {
		name        string
		age         time.Duration
		gates       []corev1.PodReadinessGate
		conditions  []corev1.PodCondition
		want        corev1.ConditionStatus
		wantRequeue time.Duration
	}{
		{"old pod without the condition gets it", time.Minute, gate, nil, corev1.ConditionTrue, 0},
		{"new pod waits for its workload", 2 * time.Second, gate, nil, "<none>", OwnerGrace - 2*time.Second},
		{"condition already True: nothing written", time.Minute, gate,
			[]corev1.PodCondition{{Type: appspub.KruisePodReadyConditionType, Status: corev1.ConditionTrue, Reason: "PodCreated"}}, corev1.ConditionTrue, 0},
		{"a False condition with nothing holding the pod is opened", 2 * time.Second, gate,
			[]corev1.PodCondition{{Type: appspub.KruisePodReadyConditionType, Status: corev1.ConditionFalse}}, corev1.ConditionTrue, 0},
		{"pod without the gate is left alone", time.Minute, nil, nil, "<none>", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", CreationTimestamp: metav1.NewTime(now.Add(-tc.age))},
				Spec:       corev1.PodSpec{ReadinessGates: tc.gates},
				Status:     corev1.PodStatus{Conditions: tc.conditions},
			}
			c := fake.NewClientBuilder().WithObjects(pod).WithStatusSubresource(pod).Build()
			r := &Reconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(now)}
			res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "p"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.RequeueAfter != tc.wantRequeue {
				t.Errorf("requeue after %v, want %v", res.RequeueAfter, tc.wantRequeue)
			}
			got := &corev1.Pod{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), got); err != nil {
				t.Fatal(err)
			}
			status := corev1.ConditionStatus("<none>")
			for _, cond := range got.Status.Conditions {
				if cond.Type == appspub.KruisePodReadyConditionType {
					status = cond.Status
				}
			}
			if status != tc.want {
				t.Errorf("KruisePodReady = %s, want %s", status, tc.want)
			}
		})
	}
}
