package podcontrol

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
)

// With PreparingNormal (the CloneSet's, as OpenKruise) a new pod starts PreparingNormal though no hook
// holds it; without, it starts Normal.
func TestCreateStartsPreparingNormal(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, all := range []bool{true, false} {
		c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&corev1.Pod{}).Build()
		clk := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
		ctl := &Control{Client: c, Clock: clk, Engine: engine.New(c, clk, inplace.Options{}), Expectations: NewExpectations()}
		owner := Owner{Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u"}},
			GVK: schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}, PreparingNormal: all}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-a"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}
		if err := ctl.Create(context.Background(), owner, pod, "web-1", "scale out", &Batch{}); err != nil {
			t.Fatal(err)
		}
		got := &corev1.Pod{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web-a"}, got); err != nil {
			t.Fatal(err)
		}
		want := appspub.LifecycleStateNormal
		if all {
			want = appspub.LifecycleStatePreparingNormal
		}
		if s := got.Labels[appspub.LifecycleStateKey]; s != string(want) || got.Annotations[appspub.LifecycleTimestampKey] == "" {
			t.Errorf("PreparingNormal %t: state %q (timestamp %q), want %s", all, s, got.Annotations[appspub.LifecycleTimestampKey], want)
		}
	}
}

// The write that ends an in-place update moves a pod in Updating on: Normal, or Updated while the
// inPlaceUpdate hook is not satisfied; a pod in another state keeps it.
func TestAfterUpdate(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	pod := func(state appspub.LifecycleStateType, labels map[string]string) *corev1.Pod {
		l := map[string]string{appspub.LifecycleStateKey: string(state)}
		for k, v := range labels {
			l[k] = v
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: l}}
	}
	hook := &appspub.Lifecycle{InPlaceUpdate: &appspub.LifecycleHook{LabelsHandler: map[string]string{"done": "true"}}}
	for _, tc := range []struct {
		name string
		o    Owner
		pod  *corev1.Pod
		want string
	}{
		{"updating, no hook", Owner{Updating: true}, pod(appspub.LifecycleStateUpdating, nil), "Normal"},
		{"updating, hook not satisfied", Owner{Lifecycle: hook}, pod(appspub.LifecycleStateUpdating, nil), "Updated"},
		{"updating, hook satisfied", Owner{Lifecycle: hook}, pod(appspub.LifecycleStateUpdating, map[string]string{"done": "true"}), "Normal"},
		{"normal", Owner{Updating: true}, pod(appspub.LifecycleStateNormal, nil), ""},
	} {
		m := afterUpdate(tc.o, tc.pod, now)
		if got := m.Labels[appspub.LifecycleStateKey]; got != tc.want || (tc.want != "" && m.Annotations[appspub.LifecycleTimestampKey] == "") {
			t.Errorf("%s: %v %v, want state %q", tc.name, m.Labels, m.Annotations, tc.want)
		}
	}
}
