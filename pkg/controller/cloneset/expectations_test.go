package cloneset

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// cacheOnly is a live read that must not happen: the cache is trusted.
func cacheOnly(t *testing.T) func() (map[string]*corev1.Pod, error) {
	return func() (map[string]*corev1.Pod, error) {
		t.Helper()
		t.Error("pods read from the API server though no expectation outlived its timeout")
		return nil, nil
	}
}

func TestExpectationsWaitForTheCache(t *testing.T) {
	now := time.Unix(1000, 0)
	e := podcontrol.NewExpectations()
	e.ExpectCreate("ns/cs", "a", now)
	e.ExpectDelete("ns/cs", "b", now)
	e.ExpectUpdate("ns/cs", "c", "rev-2", now)
	pods := map[string]*corev1.Pod{
		"b": {ObjectMeta: metav1.ObjectMeta{Name: "b"}},
		"c": {ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{inplace.RevisionLabel: "rev-1"}}},
	}
	if wait, _ := e.Pending("ns/cs", pods, now, time.Minute, cacheOnly(t)); !wait {
		t.Fatal("a cache without the writes was trusted")
	}
	pods["a"] = &corev1.Pod{}
	delete(pods, "b")
	pods["c"].Labels[inplace.RevisionLabel] = "rev-2"
	if wait, _ := e.Pending("ns/cs", pods, now, time.Minute, cacheOnly(t)); wait {
		t.Fatal("a cache showing every write is still distrusted")
	}
	e.ExpectCreate("ns/cs", "d", now)
	e.ExpectCreate("ns/cs", "f", now)
	e.Drop("ns/cs", "d")
	if wait, _ := e.Pending("ns/cs", pods, now, time.Minute, cacheOnly(t)); !wait {
		t.Fatal("dropping one failed write dropped the others")
	}
}

// An expectation the cache has not met within the timeout is checked against the API server: a
// write it shows waits another timeout for the cache; a write it does not show (the pod is gone
// again) is dropped.
func TestExpectationsOutlivingTheTimeoutAreCheckedLive(t *testing.T) {
	now := time.Unix(1000, 0)
	later := now.Add(2 * time.Minute)
	e := podcontrol.NewExpectations()
	e.ExpectCreate("ns/cs", "kept", now)
	e.ExpectCreate("ns/cs", "gone", now)
	reads := 0
	live := func() (map[string]*corev1.Pod, error) {
		reads++
		return map[string]*corev1.Pod{"kept": {}}, nil
	}
	for _, at := range []time.Time{later, later.Add(time.Minute / 2)} {
		if wait, err := e.Pending("ns/cs", nil, at, time.Minute, live); !wait || err != nil {
			t.Fatalf("wait %v, err %v: a create the API server shows must still hold the plan", wait, err)
		}
	}
	if reads != 1 {
		t.Errorf("%d live reads, want 1: a confirmed write waits another timeout for the cache", reads)
	}
	if _, ok := e.Expected("ns/cs", "gone"); ok {
		t.Error("a create the API server does not show stays expected")
	}
	if wait, _ := e.Pending("ns/cs", map[string]*corev1.Pod{"kept": {}}, later, time.Minute, cacheOnly(t)); wait {
		t.Error("the cache caught up, yet the plan waits")
	}
	e.ExpectCreate("ns/cs", "x", now)
	failed := errors.New("unavailable")
	if wait, err := e.Pending("ns/cs", nil, later, time.Minute, func() (map[string]*corev1.Pod, error) { return nil, failed }); !wait || !errors.Is(err, failed) {
		t.Errorf("wait %v, err %v: want a wait and the live read's error", wait, err)
	}
}

func TestExpectOpenUntilTheCacheShowsIt(t *testing.T) {
	now := time.Now()
	e := podcontrol.NewExpectations()
	closed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{appspub.InPlaceUpdateStateKey: `{"revision":"r1"}`}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse}}}}
	e.ExpectOpen("ns/cs", closed, now)
	if wait, _ := e.Pending("ns/cs", map[string]*corev1.Pod{"p": closed}, now, time.Minute, cacheOnly(t)); wait {
		t.Error("an opened gate holds the plan back")
	}
	if !e.Opening("ns/cs", closed) {
		t.Fatal("the gate is opened but the cache still shows it closed: it must not be opened again")
	}
	open := closed.DeepCopy()
	open.Status.Conditions[0].Status = corev1.ConditionTrue
	_, _ = e.Pending("ns/cs", map[string]*corev1.Pod{"p": open}, now, time.Minute, cacheOnly(t))
	if e.Opening("ns/cs", closed) {
		t.Error("the cache shows the gate open; the expectation must go")
	}
	// Closed again on a new update before the cache showed the open: that update's end is not held
	// back by the open of the one before, and the expectation goes.
	e.ExpectOpen("ns/cs", closed, now)
	again := closed.DeepCopy()
	again.Annotations[appspub.InPlaceUpdateStateKey] = `{"revision":"r2"}`
	if e.Opening("ns/cs", again) {
		t.Error("a pod closed on a new update counts as opening")
	}
	_, _ = e.Pending("ns/cs", map[string]*corev1.Pod{"p": again}, now, time.Minute, cacheOnly(t))
	if e.Opening("ns/cs", closed) {
		t.Error("the cache shows the pod closed on a new update; the expectation must go")
	}
	q := closed.DeepCopy()
	q.Name = "q"
	e.ExpectOpen("ns/cs", q, now)
	_, _ = e.Pending("ns/cs", map[string]*corev1.Pod{"q": q}, now.Add(2*time.Minute), time.Minute, cacheOnly(t))
	if e.Opening("ns/cs", q) {
		t.Error("an open expectation older than the timeout must go, so a lost write is retried")
	}
}

// A pod create the cache has not shown after workloadloop.ExpectationTimeout: Reconcile checks it against the
// API server (APIReader) instead of dropping it, so a cache one pod behind does not get a second
// pod created; a create the API server does not show either (the pod is gone again) is dropped.
// The check is made once per timeout, not once per reconcile.
func TestReconcileChecksExpiredWritesAgainstTheAPIServer(t *testing.T) {
	cs, rev := webAndRevision(t, 2)
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cs, gvk)},
			Labels: map[string]string{"app": "web", v1alpha1.CloneSetInstanceIDLabelKey: name, inplace.RevisionLabel: rev.Name}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	scheme := testScheme(t)
	var creates, liveReads atomic.Int32
	cache := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cs, rev, pod("web-a")).WithStatusSubresource(cs).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Pod); ok {
				creates.Add(1)
			}
			return c.Create(ctx, obj, opts...)
		}}).Build()
	live := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cs, rev, pod("web-a"), pod("web-b")).
		WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.PodList); ok {
				liveReads.Add(1)
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	now := time.Now()
	e := podcontrol.NewExpectations()
	e.ExpectCreate("ns/web", "web-b", now.Add(-time.Minute))
	e.ExpectCreate("ns/web", "web-gone", now.Add(-time.Minute))
	r := &Reconciler{Base: workloadloop.Base{Client: cache, APIReader: live, Recorder: events.NewFakeRecorder(100), Clock: clocktesting.NewFakePassiveClock(now), Expectations: e, Engine: engine.New(cache, nil, inplace.Options{}),
		Updates: podcontrol.NewUpdates()}, Scheme: scheme}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}}
	for range 2 {
		res, err := r.Reconcile(context.Background(), req)
		if err != nil || res.RequeueAfter != time.Second {
			t.Fatalf("result %+v, err %v: want a wait for the cache", res, err)
		}
	}
	if n := creates.Load(); n != 0 {
		t.Errorf("%d pods created from a cache without web-b, which the API server has", n)
	}
	if n := liveReads.Load(); n != 1 {
		t.Errorf("%d pod lists from the API server, want 1 per expectation timeout", n)
	}
	if since, ok := e.Expected("ns/web", "web-b"); !ok || !since.Equal(now) {
		t.Errorf("web-b's create since %v (expected %v): want it kept, waiting another timeout from now", since, ok)
	}
	if _, ok := e.Expected("ns/web", "web-gone"); ok {
		t.Error("a create the API server does not show stays expected")
	}
}

// A CloneSet deleted with propagation Orphan, still in the cache while the garbage collector has
// released its pods, finds them as orphans to adopt: the API server shows it gone, and it writes
// nothing -- no pod created for the replicas it lacks, none adopted, no status (the soak, seed 38:
// such a copy made 14 pods the collector deleted, and updated a pod in place beyond
// maxUnavailable).
func TestReconcileOfAGoneCloneSetWritesNothing(t *testing.T) {
	cs, rev := webAndRevision(t, 3)
	orphan := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name),
			Labels: map[string]string{"app": "web", v1alpha1.CloneSetInstanceIDLabelKey: name, inplace.RevisionLabel: rev.Name}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	scheme := testScheme(t)
	var writes writeLog
	cache := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cs, rev, orphan("web-a"), orphan("web-b")).WithStatusSubresource(cs).
		WithInterceptorFuncs(writes.funcs()).Build()
	live := fake.NewClientBuilder().WithScheme(scheme).WithObjects(rev, orphan("web-a"), orphan("web-b")).Build()
	r := &Reconciler{Base: workloadloop.Base{Client: cache, APIReader: live, Recorder: events.NewFakeRecorder(100),
		Clock: clocktesting.NewFakePassiveClock(time.Now()), Expectations: podcontrol.NewExpectations(), Engine: engine.New(cache, nil, inplace.Options{}),
		Updates: podcontrol.NewUpdates()}, Scheme: scheme}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}})
	if err != nil || res.RequeueAfter != time.Second {
		t.Fatalf("result %+v, err %v: want a look again soon", res, err)
	}
	if n := writes.total(); n != 0 {
		t.Errorf("%d writes for a CloneSet the API server shows gone", n)
	}
}

// webAndRevision is CloneSet ns/web of replicas pods of app:v1, defaulted, and its revision.
func webAndRevision(t *testing.T, replicas int32) (*v1alpha1.CloneSet, *appsv1.ControllerRevision) {
	t.Helper()
	cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "cs-uid"},
		Spec: v1alpha1.CloneSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}}}
	defaults.SetDefaultsCloneSet(cs)
	rev, err := revision.New(cs, gvk, revision.Input{Template: &cs.Spec.Template, RecordClaimTemplates: true}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, rev
}
