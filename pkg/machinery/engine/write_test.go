package engine

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// With a pod writer, a patch goes to the pod or its subresource with its type, and a pod the API
// server does not have is NotFound, as through the client.
func TestPodWriter(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(body))
		if r.URL.Path == "/api/v1/namespaces/ns/pods/gone/status" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
			return
		}
		_, _ = io.WriteString(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}`)
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := New(nil, nil, inplace.Options{}, WithPodWriter(cs.CoreV1().RESTClient())).(*engine)
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	if err := e.patch(context.Background(), pod("p"), "", types.JSONPatchType, []byte(`[]`)); err != nil {
		t.Fatal(err)
	}
	if err := e.patch(context.Background(), pod("gone"), "status", types.StrategicMergePatchType, []byte(`{}`)); !apierrors.IsNotFound(err) {
		t.Errorf("a gone pod: %v, want NotFound", err)
	}
	want := []string{"PATCH /api/v1/namespaces/ns/pods/p application/json-patch+json []",
		"PATCH /api/v1/namespaces/ns/pods/gone/status application/strategic-merge-patch+json {}"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("requests %q, want %q", got, want)
	}
}

// Unready writes the gate and returns the pod as it now stands, with conditions of its own: the pod
// it was given (the cache's) keeps its conditions, and the rest is shared, not copied.
func TestUnreadyLeavesThePodAlone(t *testing.T) {
	e := podWriterEngine(t, func() {})
	ready := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"a": "b"}},
		Status: corev1.PodStatus{Conditions: ready}}
	held, err := e.Unready(context.Background(), pod, UpdateOptions{Reason: "rollout"})
	if err != nil {
		t.Fatal(err)
	}
	if !inplace.GateFalse(held) || len(held.Status.Conditions) != 2 {
		t.Errorf("held conditions %+v, want the gate and Ready False", held.Status.Conditions)
	}
	for _, c := range held.Status.Conditions {
		if c.Status != corev1.ConditionFalse {
			t.Errorf("held condition %s=%s, want False", c.Type, c.Status)
		}
	}
	if len(pod.Status.Conditions) != 1 || pod.Status.Conditions[0].Status != corev1.ConditionTrue || inplace.GateFalse(pod) {
		t.Errorf("the pod given changed: %+v", pod.Status.Conditions)
	}
	if held == pod || held.Labels["a"] != "b" {
		t.Errorf("held is the pod itself or lost its metadata: %+v", held.ObjectMeta)
	}
}

// A pod whose gate is False from an update that has completed (its containers run again) is opened
// by the reconcile's Progress before the next update: Unready takes it out again. One held by an
// update still running is left as it is.
func TestUnreadyAgainAfterACompletedUpdate(t *testing.T) {
	var writes int
	e := podWriterEngine(t, func() { writes++ })
	pod := func(image, imageID string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Annotations: map[string]string{
			appspub.InPlaceUpdateStateKey: `{"revision":"r2","updateTimestamp":"2026-12-06T10:00:00Z","lastContainerStatuses":{"app":{"imageID":"app@1"}}}`}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:2"}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: image, ImageID: imageID,
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	}
	if _, err := e.Unready(context.Background(), pod("app:1", "app@1"), UpdateOptions{Reason: "rollout"}); err != nil || writes != 0 {
		t.Fatalf("held by a running update: %d writes (%v), want none", writes, err)
	}
	if _, err := e.Unready(context.Background(), pod("app:2", "app@2"), UpdateOptions{Reason: "rollout"}); err != nil || writes != 1 {
		t.Fatalf("held by a completed update: %d writes (%v), want the gate written again", writes, err)
	}
}

// podWriterEngine is an engine whose pod writes go to a server that calls wrote for each and
// answers with a pod.
func podWriterEngine(t *testing.T, wrote func()) Engine {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		wrote()
		_, _ = io.WriteString(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}`)
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return New(nil, nil, inplace.Options{}, WithPodWriter(cs.CoreV1().RESTClient()))
}

// A pod the caller took out of service for this update (Held) is not taken out again, even when
// the state on it is its previous update's, completed: one write, the spec patch.
func TestUpdateAllHeldPodNotTakenOutAgain(t *testing.T) {
	var writes int
	e := podWriterEngine(t, func() { writes++ })
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Annotations: map[string]string{
		appspub.InPlaceUpdateStateKey: `{"revision":"r2","updateTimestamp":"2026-12-06T10:00:00Z","lastContainerStatuses":{"app":{"imageID":"app@1"}}}`}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:2"}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse, Reason: StartReason}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "app:2", ImageID: "app@2",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	spec := &inplace.UpdateSpec{Revision: "r3", ContainerImages: map[string]string{"app": "app:3"}}
	var errs []error
	e.UpdateAll(context.Background(), []BatchUpdate{{Pod: pod, Spec: spec, Held: true}}, 1, func(_ int, err error) { errs = append(errs, err) })
	if len(errs) != 1 || errs[0] != nil || writes != 1 {
		t.Fatalf("%d writes (%v), want the spec patch alone", writes, errs)
	}
}
