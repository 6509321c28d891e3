package livepod

import (
	"context"
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func rawOf(t *testing.T, obj any) runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}

func pod(uid types.UID, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: uid, ResourceVersion: rv}}
}

// A request names its pod by the oldObject's UID and version, an eviction by its precondition's
// UID or any; an oldObject without UID names no pod.
func TestFinderGet(t *testing.T) {
	ctx := context.Background()
	api := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(pod("u1", "")).Build()
	live := &corev1.Pod{}
	if err := api.Get(ctx, types.NamespacedName{Namespace: "ns", Name: "p"}, live); err != nil {
		t.Fatal(err)
	}
	empty := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	evict := func(uid *types.UID) admissionv1.AdmissionRequest {
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
		if uid != nil {
			ev.DeleteOptions = &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: uid}}
		}
		return admissionv1.AdmissionRequest{Operation: admissionv1.Create, SubResource: "eviction", Namespace: "ns", Name: "p", Object: rawOf(t, ev)}
	}
	del := func(p *corev1.Pod) admissionv1.AdmissionRequest {
		return admissionv1.AdmissionRequest{Operation: admissionv1.Delete, Namespace: "ns", Name: "p", OldObject: rawOf(t, p)}
	}
	for _, tc := range []struct {
		name  string
		req   admissionv1.AdmissionRequest
		found bool
	}{
		{"delete, same UID", del(live), true},
		{"delete, same UID, another version", del(pod("u1", "1")), true},
		{"delete, another UID", del(pod("u2", live.ResourceVersion)), false},
		{"delete, no UID", del(pod("", live.ResourceVersion)), false},
		{"eviction without precondition", evict(nil), true},
		{"eviction, precondition of the pod's UID", evict(ptr.To(types.UID("u1"))), true},
		{"eviction, precondition of another UID", evict(ptr.To(types.UID("u2"))), false},
	} {
		w, err := Named(tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// From the cache, and from the API server when the cache lacks it.
		for via, f := range map[string]Finder{"cache": {Cache: api}, "API server": {Cache: empty, API: api}} {
			got, err := f.Get(ctx, w)
			if err != nil || (got != nil) != tc.found || (got != nil && got.UID != "u1") {
				t.Errorf("%s via the %s: got %v (%v), want found %v", tc.name, via, got, err, tc.found)
			}
		}
	}
}
