package podreadiness

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Of a gated pod's updates, only those that change what Reconcile reads bring a reconcile: not a
// kubelet's status, not an in-place update's images.
func TestGatedPodsPassesOnlyUpdatesReconcileReads(t *testing.T) {
	base := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{appspub.LifecycleStateKey: string(appspub.LifecycleStateNormal)}},
			Spec: corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: appspub.KruisePodReadyConditionType}},
				Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
				{Type: appspub.KruisePodReadyConditionType, Status: corev1.ConditionTrue}}},
		}
	}
	for name, tc := range map[string]struct {
		change func(*corev1.Pod)
		want   bool
	}{
		"the kubelet's Ready": {func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }, false},
		"an image":            {func(p *corev1.Pod) { p.Spec.Containers[0].Image = "app:v2" }, false},
		"a revision label":    {func(p *corev1.Pod) { p.Labels["controller-revision-hash"] = "r2" }, false},
		"the lifecycle state": {func(p *corev1.Pod) {
			p.Labels[appspub.LifecycleStateKey] = string(appspub.LifecycleStatePreparingUpdate)
		}, true},
		"a deletion":           {func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }, true},
		"the condition":        {func(p *corev1.Pod) { p.Status.Conditions[1].Status = corev1.ConditionFalse }, true},
		"the holders":          {func(p *corev1.Pod) { p.Status.Conditions[1].Message = `[{"userAgent":"x","key":"y"}]` }, true},
		"the condition's loss": {func(p *corev1.Pod) { p.Status.Conditions = p.Status.Conditions[:1] }, true},
		"a request named": {func(p *corev1.Pod) {
			p.Annotations = map[string]string{v1alpha1.ContainerRecreateRequestUnreadyPodKey: "crr"}
		}, true},
	} {
		old, pod := base(), base()
		tc.change(pod)
		if got := gatedPods().Update(event.UpdateEvent{ObjectOld: old, ObjectNew: pod}); got != tc.want {
			t.Errorf("%s: passes %v, want %v", name, got, tc.want)
		}
	}
	ungated := base()
	ungated.Spec.ReadinessGates = nil
	if gatedPods().Create(event.CreateEvent{Object: ungated}) || !gatedPods().Create(event.CreateEvent{Object: base()}) {
		t.Error("a pod's creation passes exactly when it carries the gate")
	}
}
