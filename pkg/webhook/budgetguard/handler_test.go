package budgetguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
)

// now is the handler's clock; etcd keeps times to the second.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s, err := kruisescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// guardedPod is a Running, Ready pod of app web.
func guardedPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}},
	}
}

// webBudget guards the pods of app web, with allowed more unavailable pods (2 must stay
// available).
func webBudget(allowed int32) *policyv1alpha1.PodUnavailableBudget {
	return &policyv1alpha1.PodUnavailableBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MaxUnavailable: ptr.To(intstr.FromInt32(1))},
		Status: policyv1alpha1.PodUnavailableBudgetStatus{TotalReplicas: 2 + allowed, DesiredAvailable: 2,
			CurrentAvailable: 2 + allowed, UnavailableAllowed: allowed},
	}
}

// cluster is a fake API server holding objs, whose budgets have their status subresource and can
// be listed by name, as the handler reads them afresh.
func cluster(t *testing.T, funcs *interceptor.Funcs, objs ...client.Object) client.WithWatch {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).
		WithStatusSubresource(&policyv1alpha1.PodUnavailableBudget{}).
		WithIndex(&policyv1alpha1.PodUnavailableBudget{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} })
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return b.Build()
}

// handler answers over c (reads, fresh reads and writes alike).
func handler(t *testing.T, c client.Client) (*Handler, *events.FakeRecorder) {
	rec := events.NewFakeRecorder(10)
	return &Handler{Reader: c, Live: c, Writer: c, Finder: &workloadfinder.Finder{Reader: c}, Recorder: rec,
		Decoder: admission.NewDecoder(testScheme(t)), Clock: clocktesting.NewFakePassiveClock(now)}, rec
}

func raw(t *testing.T, obj runtime.Object) runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}

// server is a webhook server that keeps what is registered on it.
type server struct {
	webhook.Server
	handlers map[string]http.Handler
}

func (s *server) Register(path string, h http.Handler) { s.handlers[path] = h }

// serve sends req to h at path as the API server does (an AdmissionReview over HTTP) and returns
// the answer.
func serve(t *testing.T, h *Handler, path string, req admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	req.UID = "uid"
	body, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: &req})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	srv := &server{handlers: map[string]http.Handler{}}
	Register(srv, testScheme(t), h)
	served, ok := srv.handlers[PathPrefix]
	if !ok {
		t.Fatalf("Register serves %v, not %s", srv.handlers, PathPrefix)
	}
	served.ServeHTTP(w, r)
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(w.Body.Bytes(), review); err != nil || review.Response == nil {
		t.Fatalf("answer %q: %v", w.Body.String(), err)
	}
	return review.Response
}

func deletion(t *testing.T, pod *corev1.Pod, dryRun bool) admissionv1.AdmissionRequest {
	return admissionv1.AdmissionRequest{Operation: admissionv1.Delete, Namespace: pod.Namespace, Name: pod.Name,
		Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, OldObject: raw(t, pod), DryRun: ptr.To(dryRun)}
}

func eviction(t *testing.T, pod *corev1.Pod) admissionv1.AdmissionRequest {
	return admissionv1.AdmissionRequest{Operation: admissionv1.Create, Namespace: pod.Namespace, Name: pod.Name, SubResource: "eviction",
		Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		Object:   raw(t, &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"}, ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}})}
}

func update(t *testing.T, old, pod *corev1.Pod) admissionv1.AdmissionRequest {
	return admissionv1.AdmissionRequest{Operation: admissionv1.Update, Namespace: pod.Namespace, Name: pod.Name,
		Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, OldObject: raw(t, old), Object: raw(t, pod)}
}

func status(t *testing.T, c client.Client) policyv1alpha1.PodUnavailableBudgetStatus {
	t.Helper()
	pub := &policyv1alpha1.PodUnavailableBudget{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}, pub); err != nil {
		t.Fatal(err)
	}
	return pub.Status
}

const budgetPath = PathPrefix + "ns/web"

// A deletion is admitted and recorded in the budget's status; the next one, with nothing more
// allowed, is refused with 403 and an event on the pod; an eviction then is refused with 429 and
// the cause DisruptionBudget, as a PodDisruptionBudget refuses it.
func TestHandlerDeleteThenRefuse(t *testing.T) {
	a, b, c := guardedPod("a"), guardedPod("b"), guardedPod("c")
	cl := cluster(t, nil, webBudget(1), a, b, c)
	h, rec := handler(t, cl)

	if resp := serve(t, h, budgetPath, deletion(t, a, false)); !resp.Allowed {
		t.Fatalf("first deletion refused: %+v", resp.Result)
	}
	st := status(t, cl)
	if at, ok := st.DisruptedPods["a"]; !ok || !at.Time.Equal(now) || st.UnavailableAllowed != 0 || len(st.UnavailablePods) != 0 {
		t.Errorf("status after the deletion: %+v", st)
	}

	resp := serve(t, h, budgetPath, deletion(t, b, false))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusForbidden || resp.Result.Reason != metav1.StatusReasonForbidden ||
		!strings.Contains(resp.Result.Message, "DELETE of pod ns/b refused: PodUnavailableBudget web allows no more unavailable pods") {
		t.Errorf("second deletion: allowed %v, %+v", resp.Allowed, resp.Result)
	}
	select {
	case e := <-rec.Events:
		if !strings.Contains(e, RefusedReason) {
			t.Errorf("event %q", e)
		}
	default:
		t.Error("no event for the refusal")
	}

	// The eviction entry of the namespace names no budget: the budget is found by the pod's labels.
	resp = serve(t, h, PathPrefix+"ns", eviction(t, c))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusTooManyRequests || resp.Result.Reason != metav1.StatusReasonTooManyRequests ||
		resp.Result.Details == nil || len(resp.Result.Details.Causes) != 1 || resp.Result.Details.Causes[0].Type != DisruptionBudgetCause ||
		!strings.Contains(resp.Result.Message, "EVICT of pod ns/c refused") {
		t.Errorf("eviction: allowed %v, %+v", resp.Allowed, resp.Result)
	}
	if st := status(t, cl); len(st.DisruptedPods) != 1 || st.UnavailableAllowed != 0 {
		t.Errorf("refusals changed the status: %+v", st)
	}
}

// An eviction of a pod no budget guards, or of a pod that does not exist, is allowed.
func TestHandlerEvictionUnguarded(t *testing.T) {
	other := guardedPod("other")
	other.Labels = map[string]string{"app": "api"}
	cl := cluster(t, nil, webBudget(0), other)
	h, _ := handler(t, cl)
	if resp := serve(t, h, PathPrefix+"ns", eviction(t, other)); !resp.Allowed {
		t.Errorf("eviction of an unguarded pod: %+v", resp.Result)
	}
	if resp := serve(t, h, PathPrefix+"ns", eviction(t, guardedPod("gone"))); !resp.Allowed {
		t.Errorf("eviction of a pod that does not exist: %+v", resp.Result)
	}
}

// An eviction through the namespace's entry, right after a budget's create registered it, is
// refused though the cache does not hold the budget yet: the namespace's budgets are read from
// the API server then (found in e2e TestBudgetAppliedGuardsAtOnce, with other tests loading the
// manager: the first eviction passed).
func TestHandlerEvictionFindsABudgetTheCacheLacks(t *testing.T) {
	a := guardedPod("a")
	stale := cluster(t, nil, a)
	live := cluster(t, nil, webBudget(0), a)
	h, _ := handler(t, live)
	h.Reader = stale
	resp := serve(t, h, PathPrefix+"ns", eviction(t, a))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusTooManyRequests {
		t.Errorf("eviction of a pod a budget the cache lacks guards: allowed %v, %+v", resp.Allowed, resp.Result)
	}
}

// A dry run is answered as the real operation would be, and records nothing.
func TestHandlerDryRun(t *testing.T) {
	a := guardedPod("a")
	cl := cluster(t, nil, webBudget(1), a)
	h, _ := handler(t, cl)
	if resp := serve(t, h, budgetPath, deletion(t, a, true)); !resp.Allowed {
		t.Fatalf("dry-run deletion refused: %+v", resp.Result)
	}
	if st := status(t, cl); len(st.DisruptedPods) != 0 || st.UnavailableAllowed != 1 {
		t.Errorf("a dry run recorded: %+v", st)
	}
	// The real deletion still has its unit.
	if resp := serve(t, h, budgetPath, deletion(t, a, false)); !resp.Allowed {
		t.Fatalf("deletion after the dry run refused: %+v", resp.Result)
	}
}

// An update that changes only labels is allowed without reading any budget; one that changes the
// spec is recorded in unavailablePods.
func TestHandlerUpdates(t *testing.T) {
	a := guardedPod("a")
	var budgetReads atomic.Int32
	countBudgets := func(obj runtime.Object) {
		switch obj.(type) {
		case *policyv1alpha1.PodUnavailableBudget, *policyv1alpha1.PodUnavailableBudgetList:
			budgetReads.Add(1)
		}
	}
	cl := cluster(t, &interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			countBudgets(obj)
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			countBudgets(list)
			return c.List(ctx, list, opts...)
		},
	}, webBudget(1), a)
	h, _ := handler(t, cl)

	relabelled := a.DeepCopy()
	relabelled.Labels["version"] = "2"
	relabelled.Annotations = map[string]string{"note": "x"}
	if resp := serve(t, h, budgetPath, update(t, a, relabelled)); !resp.Allowed {
		t.Fatalf("label update refused: %+v", resp.Result)
	}
	if n := budgetReads.Load(); n != 0 {
		t.Errorf("a label update read budgets %d times", n)
	}
	if st := status(t, cl); len(st.UnavailablePods)+len(st.DisruptedPods) != 0 {
		t.Errorf("a label update recorded: %+v", st)
	}

	updated := a.DeepCopy()
	updated.Spec.Containers[0].Image = "app:v2"
	if resp := serve(t, h, budgetPath, update(t, a, updated)); !resp.Allowed {
		t.Fatalf("spec update refused: %+v", resp.Result)
	}
	st := status(t, cl)
	if at, ok := st.UnavailablePods["a"]; !ok || !at.Time.Equal(now) || len(st.DisruptedPods) != 0 || st.UnavailableAllowed != 0 {
		t.Errorf("status after the spec update: %+v", st)
	}
}

// A status write that conflicts (the cache was behind) is retried from a fresh read: the decision
// counts what the fresh budget records, and nothing recorded by the other writer is lost.
func TestHandlerConflictRetried(t *testing.T) {
	ctx := context.Background()
	a := guardedPod("a")
	var updates atomic.Int32
	cl := cluster(t, &interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			updates.Add(1)
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}, webBudget(2), a)
	stale := &policyv1alpha1.PodUnavailableBudget{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, stale); err != nil {
		t.Fatal(err)
	}
	// Another writer (the webhook of another replica) records pod x meanwhile.
	fresh := stale.DeepCopy()
	fresh.Status.DisruptedPods = map[string]metav1.Time{"x": metav1.NewTime(now.Add(-time.Second))}
	fresh.Status.UnavailableAllowed = 1
	if err := cl.Status().Update(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	updates.Store(0)
	// The cache still shows the budget before that write.
	cache := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(stale, a).Build()
	h, _ := handler(t, cl)
	h.Reader = cache

	if resp := serve(t, h, budgetPath, deletion(t, a, false)); !resp.Allowed {
		t.Fatalf("deletion refused: %+v", resp.Result)
	}
	if n := updates.Load(); n != 2 {
		t.Errorf("%d status writes, want 2 (a conflict, then the retry)", n)
	}
	st := status(t, cl)
	if _, ok := st.DisruptedPods["x"]; !ok || len(st.DisruptedPods) != 2 || st.UnavailableAllowed != 0 {
		t.Errorf("status after the retry: %+v", st)
	}

	// With the fresh budget allowing nothing more, the retry refuses.
	b := guardedPod("b")
	if err := cache.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	if resp := serve(t, h, budgetPath, deletion(t, b, false)); resp.Allowed {
		t.Errorf("deletion admitted past the fresh budget")
	}
}

// A budget that cannot be read fails the admission (the entry fails closed).
func TestHandlerBudgetUnreadable(t *testing.T) {
	a := guardedPod("a")
	cl := cluster(t, &interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*policyv1alpha1.PodUnavailableBudget); ok {
				return errors.New("cache down")
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}, webBudget(1), a)
	h, _ := handler(t, cl)
	if resp := serve(t, h, budgetPath, deletion(t, a, false)); resp.Allowed || resp.Result.Code != http.StatusInternalServerError {
		t.Errorf("deletion with the budget unreadable: allowed %v, %+v", resp.Allowed, resp.Result)
	}
}

// A resize of a pod under a budget whose kruise.io/pub-protect-operations is UPDATE passes while
// InPlacePodVerticalScaling is on; with the gate off (ResizeIsUpdate), as in OpenKruise, it counts
// as an UPDATE: refused when nothing is allowed, recorded among the unavailable pods otherwise.
func TestHandlerResizeCountsAsUpdateWithoutInPlacePodVerticalScaling(t *testing.T) {
	for _, tc := range []struct {
		name           string
		resizeIsUpdate bool
		allowed        int32
		want           bool // allowed
		recorded       bool
	}{
		{"gate on, nothing allowed", false, 0, true, false},
		{"gate off, nothing allowed", true, 0, false, false},
		{"gate off, one allowed", true, 1, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := guardedPod("a")
			pub := webBudget(tc.allowed)
			pub.Annotations = map[string]string{policyv1alpha1.PubProtectOperationAnnotation: "UPDATE"}
			cl := cluster(t, nil, pub, a)
			h, _ := handler(t, cl)
			h.ResizeIsUpdate = tc.resizeIsUpdate
			resized := a.DeepCopy()
			resized.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
			req := update(t, a, resized)
			req.SubResource = "resize"
			if resp := serve(t, h, budgetPath, req); resp.Allowed != tc.want {
				t.Fatalf("resize allowed %t, want %t: %+v", resp.Allowed, tc.want, resp.Result)
			}
			st := status(t, cl)
			if _, ok := st.UnavailablePods["a"]; ok != tc.recorded || len(st.DisruptedPods) != 0 {
				t.Errorf("status after the resize: %+v", st)
			}
		})
	}
}
