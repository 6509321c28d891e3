package holders

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

func podWith(status corev1.ConditionStatus, msg string) *corev1.Pod {
	return &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: appspub.KruisePodReadyConditionType, Status: status, Message: msg}}}}
}

func TestOfAndFormat(t *testing.T) {
	for _, tc := range []struct {
		pod  *corev1.Pod
		want string
	}{
		{podWith(corev1.ConditionFalse, `[{"userAgent":"Lifecycle","key":"preDeleteHook"}]`), `[{"userAgent":"Lifecycle","key":"preDeleteHook"}]`},
		// OpenKruise's order: agent, then key; duplicates once.
		{podWith(corev1.ConditionFalse, `[{"userAgent":"Lifecycle","key":"preUpdateHook"},{"key":"ns/a","userAgent":"ContainerRecreateRequest"},{"userAgent":"Lifecycle","key":"preDeleteHook"},{"userAgent":"Lifecycle","key":"preDeleteHook"}]`),
			`[{"userAgent":"ContainerRecreateRequest","key":"ns/a"},{"userAgent":"Lifecycle","key":"preDeleteHook"},{"userAgent":"Lifecycle","key":"preUpdateHook"}]`},
		{podWith(corev1.ConditionTrue, `[{"userAgent":"Lifecycle","key":"preDeleteHook"}]`), `[]`},
		{podWith(corev1.ConditionFalse, `not a list`), `[]`},
		{&corev1.Pod{}, `[]`},
	} {
		if got := Format(Of(tc.pod)); got != tc.want {
			t.Errorf("Format(Of(%v)) = %s, want %s", tc.pod.Status.Conditions, got, tc.want)
		}
	}
}

func TestWithAndRequests(t *testing.T) {
	base := []Holder{{UserAgent: Lifecycle, Key: PreDeleteKey}}
	got := With(base, ForRequest("ns", "crr"))
	if Format(got) != `[{"userAgent":"ContainerRecreateRequest","key":"ns/crr"},{"userAgent":"Lifecycle","key":"preDeleteHook"}]` || len(base) != 1 {
		t.Errorf("With = %s (base %v)", Format(got), base)
	}
	if !Equal(With(got, ForRequest("ns", "crr")), got) {
		t.Error("adding a holder twice changed the list")
	}
	if ns, name, ok := RequestOf(ForRequest("ns", "crr")); !ok || ns != "ns" || name != "crr" {
		t.Errorf("RequestOf = %s %s %v", ns, name, ok)
	}
	if _, _, ok := RequestOf(base[0]); ok {
		t.Error("a Lifecycle holder read as a request")
	}
	for s, key := range map[appspub.LifecycleStateType]string{appspub.LifecycleStatePreparingDelete: PreDeleteKey,
		appspub.LifecycleStatePreparingUpdate: PreUpdateKey, appspub.LifecycleStateUpdating: PreUpdateKey} {
		if h, ok := LifecycleHook(s); !ok || h.Key != key {
			t.Errorf("LifecycleHook(%s) = %v %v, want %s", s, h, ok, key)
		}
	}
	if _, ok := LifecycleHook(appspub.LifecycleStateNormal); ok {
		t.Error("Normal is held by a hook")
	}
}
