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

	"github.com/kruise-ng/kruise/pkg/inplace"
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
