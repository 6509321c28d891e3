package cloneset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// A new pod (PreparingNormal, as OpenKruise creates every CloneSet pod) becomes Normal once it is
// scheduled and Ready when no preNormal hook is set; with one, once the hook is satisfied.
func TestPreparingNormalReleasedOnceScheduledAndReady(t *testing.T) {
	pod := func(node string, ready bool, labels map[string]string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-a", Labels: labels}, Spec: corev1.PodSpec{NodeName: node}}
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[appspub.LifecycleStateKey] = string(appspub.LifecycleStatePreparingNormal)
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		return p
	}
	plain := &v1alpha1.CloneSetSpec{}
	hooked := &v1alpha1.CloneSetSpec{Lifecycle: &appspub.Lifecycle{PreNormal: &appspub.LifecycleHook{LabelsHandler: map[string]string{"ok": "true"}}}}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		spec *v1alpha1.CloneSetSpec
		want bool
	}{
		{"unscheduled", pod("", false, nil), plain, false},
		{"scheduled, not ready", pod("node-a", false, nil), plain, false},
		{"scheduled and ready", pod("node-a", true, nil), plain, true},
		{"hook not satisfied", pod("node-a", true, nil), hooked, false},
		{"hook satisfied, not ready yet", pod("node-a", false, map[string]string{"ok": "true"}), hooked, true},
	} {
		f, _, _ := podFacts(tc.pod, tc.spec)
		if f.PreNormalReleased != tc.want {
			t.Errorf("%s: released %t, want %t", tc.name, f.PreNormalReleased, tc.want)
		}
	}
}
