package statefulset

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"
)

func TestInvalidSpecCondition(t *testing.T) {
	t1 := t0.Add(time.Minute)
	bound := refuse(ordinal.CheckReserveEntries(300))
	other := refuse(ordinal.CheckReplicas(math.MaxInt32))
	refused := invalidSpecCondition(nil, bound, t0)
	for _, tc := range []struct {
		name   string
		conds  []v1beta1.StatefulSetCondition
		ref    *refusal
		status corev1.ConditionStatus // "": no condition
		reason string
		since  time.Time
	}{
		{"never refused, accepted", nil, nil, "", "", time.Time{}},
		{"refused", nil, bound, corev1.ConditionTrue, ReasonSpecOutOfBounds, t1},
		{"refused again: unchanged", refused, bound, corev1.ConditionTrue, ReasonSpecOutOfBounds, t0},
		{"refused otherwise: same transition", refused, other, corev1.ConditionTrue, ReasonSpecOutOfBounds, t0},
		{"unreadable", nil, refuse(errors.New("spec.reserveOrdinals[0]: bad")), corev1.ConditionTrue, ReasonSpecUnreadable, t1},
		{"accepted again", refused, nil, corev1.ConditionFalse, ReasonSpecAccepted, t1},
	} {
		got := findCondition(invalidSpecCondition(tc.conds, tc.ref, t1), ConditionInvalidSpec)
		switch {
		case tc.status == "" && got != nil:
			t.Errorf("%s: condition %+v, want none", tc.name, got)
		case tc.status == "":
		case got == nil:
			t.Errorf("%s: no condition, want %s %s", tc.name, tc.status, tc.reason)
		case got.Status != tc.status || got.Reason != tc.reason || !got.LastTransitionTime.Time.Equal(tc.since):
			t.Errorf("%s: %s %s since %v, want %s %s since %v", tc.name, got.Status, got.Reason, got.LastTransitionTime, tc.status, tc.reason, tc.since)
		case tc.ref != nil && got.Message != tc.ref.Error():
			t.Errorf("%s: message %q, want %q", tc.name, got.Message, tc.ref.Error())
		}
	}
}

// A set stored beyond the bounds while the webhook was off: the reconcile reads no pod and writes
// none, reports the condition and one Warning event, and ends with a terminal error (no retry
// until the set changes).
func TestReconcileRefusesASpecBeyondTheBounds(t *testing.T) {
	scheme, err := kruisescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	var reserve []intstr.IntOrString
	for i := range 300 {
		reserve = append(reserve, intstr.FromString(fmt.Sprintf("%d-%d", i*ordinal.MaxReservedRange, (i+1)*ordinal.MaxReservedRange-1)))
	}
	set := &v1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "set-uid", Generation: 4},
		Spec: spec(3, appsv1.ParallelPodManagement, func(s *v1beta1.StatefulSetSpec) { s.ReserveOrdinals = reserve })}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0", Labels: map[string]string{"app": "web"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: "web", UID: "set-uid", Controller: ptr.To(true)}}}}
	var podCalls []string
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(set, pod).WithStatusSubresource(set).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			podCalls = append(podCalls, fmt.Sprintf("list %T", list))
			return c.List(ctx, list, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			podCalls = append(podCalls, "create "+obj.GetName())
			return c.Create(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			podCalls = append(podCalls, "delete "+obj.GetName())
			return c.Delete(ctx, obj, opts...)
		},
	}).Build()
	rec := events.NewFakeRecorder(10)
	r := &Reconciler{Base: workloadloop.Base{Client: c, APIReader: c, Recorder: rec, Clock: clocktesting.NewFakePassiveClock(t0), Expectations: podcontrol.NewExpectations(),
		Updates: podcontrol.NewUpdates()}}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}}
	for round := range 2 {
		res, err := r.Reconcile(context.Background(), req)
		if !errors.Is(err, reconcile.TerminalError(nil)) || res.RequeueAfter != 0 {
			t.Fatalf("round %d: result %+v, error %v; want a terminal error and no requeue", round, res, err)
		}
	}
	if len(podCalls) > 0 {
		t.Errorf("the refused set was acted on: %v", podCalls)
	}
	got := &v1beta1.StatefulSet{}
	if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	cond := findCondition(got.Status.Conditions, ConditionInvalidSpec)
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != ReasonSpecOutOfBounds ||
		!strings.Contains(cond.Message, "spec.reserveOrdinals: 300 entries, more than the 100 accepted") || got.Status.ObservedGeneration != 4 {
		t.Errorf("status %+v, want InvalidSpec True %s naming spec.reserveOrdinals and 100 at generation 4", got.Status, ReasonSpecOutOfBounds)
	}
	close(rec.Events)
	var evs []string
	for e := range rec.Events {
		evs = append(evs, e)
	}
	if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning "+ReasonSpecOutOfBounds) || !strings.Contains(evs[0], "spec.reserveOrdinals") {
		t.Errorf("events %q, want one Warning %s naming spec.reserveOrdinals", evs, ReasonSpecOutOfBounds)
	}
}
