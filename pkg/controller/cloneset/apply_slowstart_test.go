package cloneset

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// slowStart sends batches of 1, 2, 4, … and stops after the first batch with an error.
func TestSlowStartBatches(t *testing.T) {
	for _, tc := range []struct {
		items, failFrom int // failFrom: the first item (1-based) whose write fails; 0: none
		want            int // writes sent
	}{
		{items: 0, want: 0},
		{items: 1, want: 1},
		{items: 10, want: 10},
		{items: 500, failFrom: 1, want: 1},
		{items: 500, failFrom: 2, want: 3},  // batch 1 ok, batch of 2 fails
		{items: 500, failFrom: 5, want: 7},  // 1 + 2 ok, the batch of 4 fails
		{items: 500, failFrom: 9, want: 15}, // 1 + 2 + 4 ok, the batch of 8 fails
		{items: 6, failFrom: 6, want: 6},    // the last, short batch fails
	} {
		var sent atomic.Int32
		items := make([]int, tc.items)
		for i := range items {
			items[i] = i + 1
		}
		err := podcontrol.SlowStart(items, func(i int) error {
			sent.Add(1)
			if tc.failFrom > 0 && i >= tc.failFrom {
				return errors.New("refused")
			}
			return nil
		})
		if int(sent.Load()) != tc.want || (err != nil) != (tc.failFrom > 0) {
			t.Errorf("%d items failing from %d: sent %d (err %v), want %d", tc.items, tc.failFrom, sent.Load(), err, tc.want)
		}
	}
}

// With every pod create refused (a ResourceQuota of 0 pods) and 500 replicas to create, one
// reconcile sends one create and emits one event.
func TestReconcileStopsCreatingAtTheFirstRefusal(t *testing.T) {
	cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "cs-uid"},
		Spec: v1alpha1.CloneSetSpec{Replicas: ptr.To[int32](500), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}}}
	defaults.SetDefaultsCloneSet(cs)
	scheme := testScheme(t)
	var creates atomic.Int32
	quota := apierrors.NewForbidden(corev1.Resource("pods"), "", errors.New("exceeded quota: pods, requested: pods=1, used: pods=0, limited: pods=0"))
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cs).WithStatusSubresource(cs).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Pod); ok {
				creates.Add(1)
				return quota
			}
			return c.Create(ctx, obj, opts...)
		}}).Build()
	rec := events.NewFakeRecorder(1000)
	r := &Reconciler{Base: workloadloop.Base{Client: c, Recorder: rec, Clock: clock.RealClock{}, Expectations: podcontrol.NewExpectations(), Engine: engine.New(c, nil, inplace.Options{}),
		Updates: podcontrol.NewUpdates()}, Scheme: scheme}
	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}})
	if err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Errorf("reconcile error %v, want the quota refusal", err)
	}
	if n := creates.Load(); n != 1 {
		t.Errorf("%d pod creates sent, want 1", n)
	}
	close(rec.Events)
	var failed []string
	for e := range rec.Events {
		if strings.Contains(e, "FailedCreate") {
			failed = append(failed, e)
		}
	}
	if len(failed) != 1 || !slices.ContainsFunc(failed, func(e string) bool { return strings.Contains(e, "exceeded quota") }) {
		t.Errorf("%d FailedCreate events (first: %q), want one naming the quota", len(failed), append(failed, "")[0])
	}
}

// A specified deletion a PodUnavailableBudget refuses leaves its pod, and the reconcile does not
// make the replacement the plan had for it: no pod beyond replicas (the soak, seed 23).
func TestRefusedDeletionIsNotReplaced(t *testing.T) {
	cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "cs-uid"},
		Spec: v1alpha1.CloneSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}}}
	defaults.SetDefaultsCloneSet(cs)
	rev, err := revision.New(cs, gvk, revision.Input{Template: &cs.Spec.Template}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name string, labels map[string]string) *corev1.Pod {
		l := map[string]string{"app": "web", v1alpha1.CloneSetInstanceIDLabelKey: name, inplace.RevisionLabel: rev.Name}
		maps.Copy(l, labels)
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-" + name, Labels: l,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cs, gvk)}},
			Spec:   corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	}
	var deletes, creates atomic.Int32
	refused := apierrors.NewForbidden(corev1.Resource("pods"), "web-a", errors.New("PodUnavailableBudget web allows no more unavailable pods"))
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(cs, rev, pod("a", map[string]string{v1alpha1.SpecifiedDeleteKey: "true"}), pod("b", nil)).
		WithStatusSubresource(cs).
		WithInterceptorFuncs(interceptor.Funcs{
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				if _, ok := obj.(*corev1.Pod); ok {
					deletes.Add(1)
					return refused
				}
				return c.Delete(ctx, obj, opts...)
			},
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if _, ok := obj.(*corev1.Pod); ok {
					creates.Add(1)
				}
				return c.Create(ctx, obj, opts...)
			}}).Build()
	r := &Reconciler{Base: workloadloop.Base{Client: c, Recorder: events.NewFakeRecorder(100), Clock: clock.RealClock{}, Expectations: podcontrol.NewExpectations(),
		Engine: engine.New(c, nil, inplace.Options{}), Updates: podcontrol.NewUpdates()}, Scheme: testScheme(t)}
	_, _ = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}})
	if deletes.Load() != 1 || creates.Load() != 0 {
		t.Errorf("%d pod deletes, %d creates; want the specified pod's deletion tried and no replacement made", deletes.Load(), creates.Load())
	}
}
